package process

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// tryGunzip is the gunzipped content of path ("" when it cannot be read).
func tryGunzip(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(zr)
	return string(b)
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

// Each rotation shifts the rotated files by one: the newest stays as it
// was copied, older ones are compressed, the oldest beyond keep goes, and
// each file's index moves with it.
func TestLogRotationKeepsCompressedFilesUpToKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc+0123456789abcdef.log")
	for gen := 1; gen <= 5; gen++ {
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("generation %d\n", gen)), 0o644))
		appendIndex(path, fmt.Sprintf("%d 0 start\n", gen))
		require.NoError(t, rotateFiles(path, 3))
	}
	cur, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Empty(t, cur, "the log itself is truncated in place")
	one, err := os.ReadFile(path + ".1")
	require.NoError(t, err)
	require.Equal(t, "generation 5\n", string(one))
	require.Equal(t, "generation 4\n", gunzip(t, path+".2.gz"))
	require.Equal(t, "generation 3\n", gunzip(t, path+".3.gz"))
	require.NoFileExists(t, path+".4.gz", "keep 3: three rotated files")
	require.NoFileExists(t, path+".2")
	for k, gen := range map[int]int64{1: 5, 2: 4, 3: 3} {
		marks := readIndex(rotatedPath(path, k))
		require.Len(t, marks, 1, "file %d", k)
		require.Equal(t, gen, marks[0].At.UnixMilli(), "the index of file %d moved with it", k)
	}
	require.NoFileExists(t, indexPath(path), "the log's index went with its content to .1")
	left, _ := filepath.Glob(path + "*")
	require.Len(t, left, 7, "the log, 3 rotated files, their 3 indexes: %v", left)
}

// A service whose process.logs asks for small files and two of them has
// its log rotated while it writes, never more than two rotated files, and
// its policy kept in its record for the next worker.
func TestServiceLogKeptWithinItsPolicy(t *testing.T) {
	d, dir := newDriver(t, nil)
	d.StateDir = t.TempDir()
	id, err := d.Start(context.Background(), req("svc/chatty", map[string]any{
		"command": "sh", "args": []string{"-c", `i=0; while :; do i=$((i+1)); echo "line $i of a service that writes a good deal"; sleep 0.002; done`},
		"startSeconds": "100ms", "logs": map[string]any{"maxSize": "4Ki", "keep": 2},
	}))
	require.NoError(t, err)
	path := LogPath(dir, "svc/chatty")
	require.Eventually(t, func() bool { _, err := os.Stat(path + ".2.gz"); return err == nil }, 20*time.Second, 50*time.Millisecond,
		"rotated twice within its policy")
	require.Never(t, func() bool { _, err := os.Stat(path + ".3.gz"); return err == nil }, 3*time.Second, 100*time.Millisecond)
	// The service writes on, and each rotation moves .1.gz over .2.gz: a
	// read may fall between (TestServiceLogKeptWithinItsPolicy, flaky on a
	// loaded machine), so it is tried until one lands.
	require.Eventually(t, func() bool { return strings.Contains(tryGunzip(path+".2.gz"), "of a service that writes") }, 10*time.Second, 20*time.Millisecond)
	b, err := os.ReadFile(d.recordPath("svc/chatty"))
	require.NoError(t, err)
	var rec record
	require.NoError(t, json.Unmarshal(b, &rec))
	require.Equal(t, &LogPolicy{MaxSize: 4 << 10, Keep: 2}, rec.Logs)
	require.True(t, alive(pidOf(id)))
}

// Files of a log not written for their age are removed, the log a running
// service writes never; an index goes with its file.
func TestLogFilesPastTheirAgeAreRemoved(t *testing.T) {
	dir := t.TempDir()
	d := New(dir, nil, zaptest.NewLogger(t))
	// Its rotator stopped: this test prunes by hand and sets d.Logs, which
	// the rotator reads (a data race once it ticks).
	d.Close()
	old := time.Now().Add(-48 * time.Hour)
	write := func(name string, at time.Time) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
		require.NoError(t, os.Chtimes(p, at, at))
	}
	write("live+1.log", old)   // a running service's, quiet for two days
	write("live+1.log.1", old) // its rotated file
	write("live+1.log.1.idx", old)
	write("live+1.log.2.gz", time.Now())
	write("gone+2.log", old) // a service no longer here
	write("gone+2.log.idx", old)
	write("recent+3.log", time.Now())
	d.prune(map[string]LogPolicy{filepath.Join(dir, "live+1.log"): {MaxAge: 24 * time.Hour}})
	for name, kept := range map[string]bool{
		"live+1.log": true, "live+1.log.1": false, "live+1.log.1.idx": false, "live+1.log.2.gz": true,
		"gone+2.log": true, "gone+2.log.idx": true, "recent+3.log": true,
	} {
		_, err := os.Stat(filepath.Join(dir, name))
		require.Equal(t, kept, err == nil, name)
	}
	d.Logs.MaxAge = time.Hour
	d.prune(nil)
	require.NoFileExists(t, filepath.Join(dir, "gone+2.log"), "the host's age for a log no service writes")
	require.NoFileExists(t, filepath.Join(dir, "gone+2.log.idx"))
	require.FileExists(t, filepath.Join(dir, "recent+3.log"))
}

// --since reads from the file written since then, at the last size its
// index had by then; --previous the run before the last; both across a
// compressed file, and in pages of MaxLogRead.
func TestReadLogRangeAcrossRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	wf := "tree/svc"
	path := LogPath(dir, wf)
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	// Oldest: run 1 from its start, compressed (written up to minute 10).
	require.NoError(t, os.WriteFile(path+".1", []byte("run1 a\nrun1 b\n"), 0o644))
	appendIndex(path+".1", fmt.Sprintf("%d 0 start\n%d 7\n", at(0).UnixMilli(), at(5).UnixMilli()))
	require.NoError(t, os.Chtimes(path+".1", at(10), at(10)))
	require.NoError(t, compressFile(path+".1", path+".2.gz"))
	renameIfExists(indexPath(path+".1"), indexPath(path+".2.gz"))
	// Then: run 1's end and run 2's start (up to minute 30).
	require.NoError(t, os.WriteFile(path+".1", []byte("run1 c\nrun2 a\n"), 0o644))
	appendIndex(path+".1", fmt.Sprintf("%d 7 start\n", at(20).UnixMilli()))
	require.NoError(t, os.Chtimes(path+".1", at(30), at(30)))
	// The log: run 2 goes on, run 3 starts.
	require.NoError(t, os.WriteFile(path, []byte("run2 b\nrun3 a\nrun3 b\n"), 0o644))
	appendIndex(path, fmt.Sprintf("%d 7 start\n%d 14\n", at(40).UnixMilli(), at(50).UnixMilli()))
	require.NoError(t, os.Chtimes(path, at(60), at(60)))

	read := func(sel LogSelect) string {
		t.Helper()
		b, _, more, err := ReadLogRange(dir, wf, sel, LogPosition{})
		require.NoError(t, err)
		require.False(t, more)
		return string(b)
	}
	require.Equal(t, "run1 a\nrun1 b\nrun1 c\nrun2 a\nrun2 b\nrun3 a\nrun3 b\n", read(LogSelect{}))
	require.Equal(t, "run1 b\nrun1 c\nrun2 a\nrun2 b\nrun3 a\nrun3 b\n", read(LogSelect{Since: at(6)}), "from the size the compressed file had by then")
	require.Equal(t, "run1 c\nrun2 a\nrun2 b\nrun3 a\nrun3 b\n", read(LogSelect{Since: at(15)}), "a file written after: whole")
	require.Equal(t, "run3 b\n", read(LogSelect{Since: at(55)}))
	require.Equal(t, "", read(LogSelect{Since: at(61)}), "nothing since")
	require.Equal(t, "run2 a\nrun2 b\n", read(LogSelect{Previous: true}), "the run before the last, across two files")
	require.Equal(t, "run2 b\n", read(LogSelect{Previous: true, Since: at(31)}))

	// The position after the log's end is where a follow goes on.
	_, next, _, err := ReadLogRange(dir, wf, LogSelect{Since: at(55)}, LogPosition{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("run2 b\nrun3 a\nrun3 b\nrun3 c\n"), 0o644))
	b, _, err := ReadLogFrom(dir, wf, next)
	require.NoError(t, err)
	require.Equal(t, "run3 c\n", string(b))

	// Pages of MaxLogRead.
	big := bytes.Repeat([]byte("0123456789abcdef\n"), MaxLogRead/17+100)
	require.NoError(t, os.WriteFile(path, big, 0o644))
	var all []byte
	pos := LogPosition{}
	for pages := 1; ; pages++ {
		b, next, more, err := ReadLogRange(dir, wf, LogSelect{Since: at(0)}, pos)
		require.NoError(t, err)
		all, pos = append(all, b...), next
		if !more {
			require.Equal(t, 2, pages)
			break
		}
		require.Less(t, pages, 5)
	}
	require.Equal(t, "run1 a\nrun1 b\nrun1 c\nrun2 a\n"+string(big), string(all))
}

// A service started twice here: --previous is what its first run wrote.
func TestPreviousRunOfARestartedService(t *testing.T) {
	d, dir := newDriver(t, nil)
	r := req("svc/twice", map[string]any{"command": "sh", "args": []string{"-c", `echo "run $$"; exec sleep 60`}, "startSeconds": "100ms"})
	first, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	_, _, _, err = ReadLogRange(dir, "svc/twice", LogSelect{Previous: true}, LogPosition{})
	require.ErrorIs(t, err, ErrNoPreviousRun)
	r.Instance = first
	second, err := d.Restart(context.Background(), r)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(LogPath(dir, "svc/twice"))
		return strings.Count(string(b), "run ") == 2
	}, 5*time.Second, 20*time.Millisecond)
	b, _, _, err := ReadLogRange(dir, "svc/twice", LogSelect{Previous: true}, LogPosition{})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("run %d\n", pidOf(first)), string(b))
	require.NotEqual(t, pidOf(first), pidOf(second))
}

// A service writing 50 MiB/s to its log while the driver rotates it (10 MiB
// files, 3 kept, checked every rotateEvery as the rotator does): the
// latency of each of its 64 KiB writes, and the most its log's files took
// on disk against their bound. The service writes its file itself, so a
// rotation (a copy that reads the file, a truncate) is all its writes can
// meet. Goals (issue 50): log_write_stall_p99_ms <= 10; log_dir_max_mib
// within log_dir_bound_mib, which is (keep + 1) files of MaxSize plus
// what the service writes in rotateEvery (docs/operations.md, "Logs").
func BenchmarkLogWriteDuringRotation(b *testing.B) {
	dir := b.TempDir()
	d := New(dir, nil, nil)
	defer d.Close()
	path := LogPath(dir, "bench/writer")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	pol := LogPolicy{MaxSize: 10 << 20, Keep: 3}
	stop := make(chan struct{})
	type result struct {
		rotations int
		maxBytes  int64
	}
	done := make(chan result)
	dirBytes := func() int64 {
		var n int64
		files, _ := filepath.Glob(path + "*")
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	go func() { // the rotator's part for this log
		var r result
		for {
			select {
			case <-stop:
				done <- r
				return
			case <-time.After(rotateEvery):
			}
			r.maxBytes = max(r.maxBytes, dirBytes())
			if st, err := os.Stat(path); err == nil && st.Size() >= pol.MaxSize {
				r.rotations++
			}
			d.rotate(path, pol)
			d.sample(path)
			r.maxBytes = max(r.maxBytes, dirBytes())
		}
	}()
	chunk := bytes.Repeat([]byte("a line of a busy service's output, 64 bytes with its newline.\n"), 1024)
	const rate = 50 << 20 // bytes per second
	every := time.Duration(float64(time.Second) * float64(len(chunk)) / rate)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	next := time.Now()
	for i := 0; i < b.N; i++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(every)
		t0 := time.Now()
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	close(stop)
	r := <-done
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "log_write_stall_p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "log_write_stall_max_ms")
	b.ReportMetric(float64(r.rotations), "rotations")
	bound := int64(pol.Keep+1) * (pol.MaxSize + int64(rate*rotateEvery.Seconds()))
	b.ReportMetric(float64(r.maxBytes)/(1<<20), "log_dir_max_mib")
	b.ReportMetric(float64(bound)/(1<<20), "log_dir_bound_mib")
}

// An index past its bound is thinned: every other sample goes, the starts
// and the last sample stay, and it ends under the bound.
func TestLogIndexIsThinnedPastItsBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc+0123456789abcdef.log")
	var b strings.Builder
	n := 0
	for b.Len() <= indexMax {
		if n%100 == 0 {
			fmt.Fprintf(&b, "%d %d start\n", 1_700_000_000_000+n, n*10)
		} else {
			fmt.Fprintf(&b, "%d %d\n", 1_700_000_000_000+n, n*10)
		}
		n++
	}
	require.NoError(t, os.WriteFile(indexPath(path), []byte(b.String()), 0o644))
	before := readIndex(path)
	thinIndex(path)
	after := readIndex(path)
	st, err := os.Stat(indexPath(path))
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(indexMax)*3/4)
	starts := func(ms []logMark) (k int) {
		for _, m := range ms {
			if m.Start {
				k++
			}
		}
		return k
	}
	require.Equal(t, starts(before), starts(after), "every start kept")
	require.Equal(t, before[len(before)-1], after[len(after)-1], "the last sample kept")
	require.Less(t, len(after), len(before)*2/3)
}

// One pass of the rotator over the logs of 1,000 running services, none
// full (the common case, every rotateEvery): what checking every second
// costs a host's worker.
func BenchmarkRotatorPassOf1000Logs(b *testing.B) {
	dir := b.TempDir()
	d := New(dir, nil, nil)
	defer d.Close()
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = LogPath(dir, fmt.Sprintf("tree/svc%04d", i))
		if err := os.WriteFile(paths[i], []byte("a line\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	pol := d.hostLogs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range paths {
			d.rotate(p, pol)
			d.sample(p)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/pass")
}
