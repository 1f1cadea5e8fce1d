package treestatus

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
)

// Digest is a short hash of what a status answer shows (its own fields and
// its direct children's records): two answers with the same digest show
// the same. A watch asks a supervisor for it (the `statusDigest` query, a
// few bytes) and fetches the whole answer only when it changed.
func Digest(st Status) string {
	h := fnv.New64a()
	var buf [8]byte
	num := func(v int64) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	str := func(s string) {
		num(int64(len(s)))
		h.Write([]byte(s))
	}
	var one func(s Status, deep bool)
	one = func(s Status, deep bool) {
		for _, v := range []string{s.Path, s.Kind, s.State, s.Desired, s.Reason, s.Instance, s.Strategy, s.Stale, s.Subtree,
			s.LastAction.Name, s.LastAction.Status, s.LastAction.Error} {
			str(v)
		}
		for _, v := range []int64{int64(s.Restarts), int64(s.ManualRestarts), s.Generation, int64(s.LastAction.Attempts),
			s.Since.UnixNano(), s.BackoffUntil.UnixNano(), int64(s.RejectedSignals), int64(s.Terminations),
			int64(s.RecentRestarts), s.SuperviseSeq} {
			num(v)
		}
		for _, b := range []bool{s.Completed, s.Applying, s.AwaitingRestart, s.WorkflowClosed} {
			if b {
				num(1)
			} else {
				num(0)
			}
		}
		num(int64(len(s.Children)))
		if deep {
			for _, c := range s.Children {
				one(c, false)
			}
		}
	}
	one(st, true)
	return strconv.FormatUint(h.Sum64(), 36)
}
