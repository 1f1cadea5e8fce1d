package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTailLogTakesTheLastLinesAcrossTheBackup(t *testing.T) {
	dir := t.TempDir()
	path := LogPath(dir, "plant/web")
	require.Equal(t, dir, filepath.Dir(path))
	require.Regexp(t, `^plant_web\+[0-9a-f]{16}\.log$`, filepath.Base(path))
	_, _, err := TailLog(dir, "plant/web", 10)
	require.ErrorIs(t, err, ErrNoLog)

	require.NoError(t, os.WriteFile(path+".1", []byte("old 1\nold 2\nold 3\n"), 0o644))
	require.NoError(t, os.WriteFile(path, []byte("new 1\nnew 2\npartial"), 0o644))
	text, end, err := TailLog(dir, "plant/web", 2)
	require.NoError(t, err)
	require.Equal(t, "new 2\npartial", string(text))
	require.EqualValues(t, len("new 1\nnew 2\npartial"), end.Offset)
	require.NotZero(t, end.File)

	text, _, err = TailLog(dir, "plant/web", 5)
	require.NoError(t, err)
	require.Equal(t, "old 2\nold 3\nnew 1\nnew 2\npartial", string(text), "the backup fills in what the file lacks")
}

func TestTailLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 1023) + "\n"
	require.NoError(t, os.WriteFile(LogPath(dir, "w"), []byte(strings.Repeat(line, 1000)), 0o644))
	text, _, err := TailLog(dir, "w", 1000)
	require.NoError(t, err)
	require.LessOrEqual(t, len(text), MaxLogRead)
	require.True(t, strings.HasPrefix(string(text), "xxx"), "cut at a line's start")
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// readsNext reads worker w's log from pos, expects want, and returns the
// next position.
func readsNext(t *testing.T, dir string, pos LogPosition, want, why string) LogPosition {
	t.Helper()
	text, next, err := ReadLogFrom(dir, "w", pos)
	require.NoError(t, err)
	require.Equal(t, want, string(text), why)
	return next
}

// A follow loses nothing across a rotation: the rest of the renamed file
// comes first, then the new file from its start.
func TestReadLogFromFollowsAcrossRotation(t *testing.T) {
	dir := t.TempDir()
	path := LogPath(dir, "w")
	text, pos, err := ReadLogFrom(dir, "w", LogPosition{})
	require.NoError(t, err)
	require.Empty(t, text, "not written yet")
	appendTo(t, path, "a\nb\n")
	text, pos, err = ReadLogFrom(dir, "w", pos)
	require.NoError(t, err)
	require.Equal(t, "a\nb\n", string(text))
	text, pos2, err := ReadLogFrom(dir, "w", pos)
	require.NoError(t, err)
	require.Empty(t, text)
	require.Equal(t, pos, pos2)

	// Written after the last read, then rotated, then the new file grows
	// past the old offset.
	appendTo(t, path, "c\n")
	require.NoError(t, os.Rename(path, path+".1"))
	appendTo(t, path, "d\ne\nf\ng\n")
	pos = readsNext(t, dir, pos, "c\n", "the rest of the rotated file")
	pos = readsNext(t, dir, pos, "d\ne\nf\ng\n", "then the new file from its start")
	pos = readsNext(t, dir, pos, "", "nothing more")

	// Rotated as the driver does it (copied to ".1", truncated in place),
	// with lines written after the last read: they come from the copy,
	// then the file from its start.
	appendTo(t, path, "h\ni\n")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".1", b, 0o644))
	require.NoError(t, os.Truncate(path, 0))
	appendTo(t, path, "j\n")
	pos = readsNext(t, dir, pos, "h\ni\n", "the rest of the copy")
	pos = readsNext(t, dir, pos, "j\n", "then the truncated file from its start")
	readsNext(t, dir, pos, "", "nothing more")
}

// Regression (attack review): a tail read the whole log into memory for
// its last lines (a tail of one line of a 300 MiB log held 616 MiB), and a
// last line longer than MaxLogRead came back empty (a service could hide
// its recent output). A tail reads the last MaxLogRead bytes only, and
// keeps a cut last line.
func TestTailLog_ReadsTheEndOnlyAndKeepsALongLastLine(t *testing.T) {
	dir := t.TempDir()
	path := LogPath(dir, "w")
	f, err := os.Create(path)
	require.NoError(t, err)
	chunk := strings.Repeat("x", 1023) + "\n"
	for range 4096 { // 4 MiB of lines before the end
		_, err = f.WriteString(chunk)
		require.NoError(t, err)
	}
	_, err = f.WriteString("the last line\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	b, pos, err := TailLog(dir, "w", 1)
	require.NoError(t, err)
	require.Equal(t, "the last line\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), pos.Offset)

	long := strings.Repeat("y", MaxLogRead+100) + "\n"
	require.NoError(t, os.WriteFile(path, []byte("before\n"+long), 0o640))
	b, _, err = TailLog(dir, "w", 1)
	require.NoError(t, err)
	require.Len(t, b, MaxLogRead, "the end of a line longer than a read, not nothing")
	require.True(t, strings.HasSuffix(string(b), "yyy\n"))
}

// Found by the review: a tail whose window cut the current file put the
// backup's last lines before the window's, hiding what lay between.
func TestTailLog_ACutFileTakesNothingFromItsBackup(t *testing.T) {
	dir := t.TempDir()
	path := LogPath(dir, "w")
	line := strings.Repeat("n", 10<<10-1) + "\n"
	require.NoError(t, os.WriteFile(path+".1", []byte("old line\n"), 0o640))
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(line, 100)), 0o640)) // 1 MiB: past a window
	b, _, err := TailLog(dir, "w", 100)
	require.NoError(t, err)
	require.NotContains(t, string(b), "old line")
	require.LessOrEqual(t, len(b), MaxLogRead)
}
