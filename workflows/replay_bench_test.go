package workflows

import (
	"path/filepath"
	"testing"
)

// BenchmarkReplay replays each recorded history (testdata/history-*.json,
// TestReplayRecordedHistories) from its JSON file: the CPU a worker process
// spends to rebuild a workflow from its history, every workflow task's code
// included (and the file's parsing: compare between commits, not with a
// live task's latency).
func BenchmarkReplay(b *testing.B) {
	files, err := filepath.Glob("testdata/history-*.json")
	if err != nil || len(files) == 0 {
		b.Fatal("no recorded histories", err)
	}
	for _, f := range files {
		b.Run(filepath.Base(f), func(b *testing.B) {
			r := newReplayer()
			for range b.N {
				if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
