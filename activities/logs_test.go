package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/steward-sh/steward/internal/driver/process"
)

func TestReadLogTailsAndFollows(t *testing.T) {
	dir := t.TempDir()
	l := &Logs{Dir: dir, Poll: 10 * time.Millisecond}
	_, err := l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "p/w", Lines: 10})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, ErrNoLog, app.Type())
	require.True(t, app.NonRetryable())
	require.Contains(t, app.Message(), "no log file")

	path := process.LogPath(dir, "p/w")
	require.NoError(t, os.WriteFile(path, []byte("a\nb\nc\n"), 0o644))
	res, err := l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "p/w", Lines: 2})
	require.NoError(t, err)
	require.Equal(t, "b\nc\n", string(res.Data))
	require.EqualValues(t, 6, res.Next.Offset)

	// A follow read waits for new output and returns it.
	go func() {
		time.Sleep(50 * time.Millisecond)
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.WriteString("d\n")
			f.Close()
		}
	}()
	res, err = l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "p/w", Follow: true, From: res.Next, Wait: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, "d\n", string(res.Data))
	require.EqualValues(t, 8, res.Next.Offset)

	// Nothing new within Wait: an empty answer at the same offset.
	res, err = l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "p/w", Follow: true, From: res.Next, Wait: 30 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, res.Data)
	require.EqualValues(t, 8, res.Next.Offset)
}

// A service an older worker started writes its log under the legacy name
// (process/logfile.go): read while no log of the new layout exists.
func TestReadLogReadsTheLegacyLogOfAnOlderWorkersService(t *testing.T) {
	dir := t.TempDir()
	l := &Logs{Dir: dir, Poll: 10 * time.Millisecond}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a_b_c.log"), []byte("from before\n"), 0o644))
	res, err := l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "a_b/c", Lines: 10})
	require.NoError(t, err)
	require.Equal(t, "from before\n", string(res.Data))

	require.NoError(t, os.WriteFile(process.LogPath(dir, "a_b/c"), []byte("started again\n"), 0o644))
	res, err = l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "a_b/c", Lines: 10})
	require.NoError(t, err)
	require.Equal(t, "started again\n", string(res.Data), "its own log once it exists")
}

// The defect: follow reads started by hand (LogsWorkflow), each waiting
// years on a log that does not exist, held every action slot of a host.
// A read waits MaxFollowWait at most, and one beyond MaxFollowsAtOnce
// waiting answers at once: the slots stay the services'.
func TestReadLog_FollowsBeyondTheBoundAnswerAtOnce(t *testing.T) {
	l := &Logs{Dir: t.TempDir(), Poll: 10 * time.Millisecond}
	for range MaxFollowsAtOnce {
		l.following.Add(1) // as many follows as allowed wait now
	}
	began := time.Now()
	res, err := l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "nope/x", Follow: true, Wait: 10 * 365 * 24 * time.Hour})
	require.NoError(t, err)
	require.Empty(t, res.Data)
	require.Less(t, time.Since(began), MaxFollowWait, "answered without waiting")
	require.EqualValues(t, MaxFollowsAtOnce, l.following.Load(), "its count given back")
}

// The worker reaches its log directory through a descriptor
// (/proc/self/fd/N, process.AnchorDir); a reader was told
// "/proc/self/fd/7/...: no log file", a path that names nothing to them.
func TestReadLog_AnErrorNamesTheLogDirectoryNotItsDescriptor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	require.NoError(t, os.Mkdir(dir, 0o750))
	anchored, err := process.AnchorDir(dir)
	require.NoError(t, err)
	l := &Logs{Dir: anchored, Poll: 10 * time.Millisecond}
	_, err = l.ReadLog(context.Background(), ReadLogRequest{WorkflowID: "p/w", Lines: 10})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	require.Equal(t, ErrNoLog, app.Type())
	require.Contains(t, app.Message(), dir)
	require.NotContains(t, app.Message(), "/proc/self/fd/")
}
