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
	require.Equal(t, filepath.Join(dir, "plant_web.log"), path)
	_, _, err := TailLog(dir, "plant/web", 10)
	require.ErrorIs(t, err, ErrNoLog)

	require.NoError(t, os.WriteFile(path+".1", []byte("old 1\nold 2\nold 3\n"), 0o644))
	require.NoError(t, os.WriteFile(path, []byte("new 1\nnew 2\npartial"), 0o644))
	text, end, err := TailLog(dir, "plant/web", 2)
	require.NoError(t, err)
	require.Equal(t, "new 2\npartial", text)
	require.EqualValues(t, len("new 1\nnew 2\npartial"), end)

	text, _, err = TailLog(dir, "plant/web", 5)
	require.NoError(t, err)
	require.Equal(t, "old 2\nold 3\nnew 1\nnew 2\npartial", text, "the backup fills in what the file lacks")
}

func TestTailLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 1023) + "\n"
	require.NoError(t, os.WriteFile(LogPath(dir, "w"), []byte(strings.Repeat(line, 1000)), 0o644))
	text, _, err := TailLog(dir, "w", 1000)
	require.NoError(t, err)
	require.LessOrEqual(t, len(text), MaxLogRead)
	require.True(t, strings.HasPrefix(text, "xxx"), "cut at a line's start")
}

func TestReadLogFromFollowsAndSeesRotation(t *testing.T) {
	dir := t.TempDir()
	path := LogPath(dir, "w")
	text, next, err := ReadLogFrom(dir, "w", 0)
	require.NoError(t, err)
	require.Equal(t, "", text, "not written yet")
	require.NoError(t, os.WriteFile(path, []byte("a\nb\n"), 0o644))
	text, next, err = ReadLogFrom(dir, "w", next)
	require.NoError(t, err)
	require.Equal(t, "a\nb\n", text)
	text, next2, err := ReadLogFrom(dir, "w", next)
	require.NoError(t, err)
	require.Equal(t, "", text)
	require.Equal(t, next, next2)
	require.NoError(t, os.WriteFile(path, []byte("c\n"), 0o644)) // rotated: shorter than the offset
	text, _, err = ReadLogFrom(dir, "w", next)
	require.NoError(t, err)
	require.Equal(t, "c\n", text)
}
