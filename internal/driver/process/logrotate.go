package process

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Keeping logs. A service writes its log file itself, appending (it
// outlives its worker, so its output never goes through a pipe to the
// worker), and the driver keeps the file within bounds around it:
//
//   - Rotation by copy and truncate: a log of LogPolicy.MaxSize or more is
//     copied to "<log>.1" and truncated in place, so the service's next
//     write lands at the start of the same file. The service never waits
//     on a rotation (its writes go to the file as ever; the copy only
//     reads it). What it writes between the copy and the truncation is
//     lost (a few bytes at most: the two are a moment apart).
//   - Keep rotated files: "<log>.1" as it was copied (a follow read may be
//     in the middle of it), older ones gzip-compressed, "<log>.2.gz" to
//     "<log>.KEEP.gz"; the oldest beyond Keep is removed at a rotation.
//   - Max age: a file of a log not written for MaxAge (a rotated one, or
//     the log of a service no longer running here) is removed.
//   - An index per file ("<log>.idx", "<log>.1.idx", "<log>.2.idx", ...)
//     records when the file had what size, and where each run of the
//     service began: `starter logs --since` and `--previous` read from it
//     (logrange.go). A line of it is "<unix ms> <offset>" (a sample) or
//     "<unix ms> <offset> start" (a start of the service).
//
// The driver checks the logs of running processes every rotateEvery, so a
// log grows past MaxSize by at most what its service writes in that time.
// The disk one service's log takes is about MaxSize (plus that) for the
// file, MaxSize for "<log>.1" and Keep-1 compressed files of MaxSize each
// before compression (docs/operations.md, "Logs").

// LogPolicy is how a service's log is kept. A zero field takes the host's
// value (worker --log-max-size, --log-keep, --log-max-age).
type LogPolicy struct {
	// MaxSize: a log this large or larger is rotated (bytes).
	MaxSize int64 `json:"maxSize,omitempty"`
	// Keep: how many rotated files are kept (the newest uncompressed).
	Keep int `json:"keep,omitempty"`
	// MaxAge: a file of the log not written for this long is removed.
	MaxAge time.Duration `json:"maxAge,omitempty"`
}

// logMode is the mode of a service's log, its rotated copies and their
// index: a service's output often holds tokens, so the worker's user and
// group read it (the package's /var/log/steward is root:adm 0750), no
// other local user.
const logMode = 0o640

// Defaults of a host's LogPolicy.
const (
	DefaultLogMaxBytes = 10 << 20
	DefaultLogKeep     = 5
	DefaultLogMaxAge   = 30 * 24 * time.Hour
)

// over is p with every zero field taken from host.
func (p LogPolicy) over(host LogPolicy) LogPolicy {
	if p.MaxSize <= 0 {
		p.MaxSize = host.MaxSize
	}
	if p.Keep <= 0 {
		p.Keep = host.Keep
	}
	if p.MaxAge <= 0 {
		p.MaxAge = host.MaxAge
	}
	return p
}

// How often the driver checks the logs of running processes (rotation,
// the index), and how often it removes what is past its age.
const (
	rotateEvery = time.Second
	pruneEvery  = 10 * time.Minute
)

// When the index takes a sample of a log's size: once it changed, at
// least sampleEvery after the last one, and once the log grew by
// sampleBytes or sampleIdle passed: `--since` is exact to about
// sampleEvery for a service that writes a good deal, to sampleIdle for a
// quiet one. An index past indexMax bytes is thinned (every other sample
// dropped, the starts kept), so a file that lives long keeps a coarser
// index of bounded size.
const (
	sampleEvery = 10 * time.Second
	sampleBytes = 16 << 10
	sampleIdle  = time.Minute
	indexMax    = 64 << 10
)

// logSample is the last index sample of a log this driver took.
type logSample struct {
	at   time.Time
	size int64
}

// rotatedPath is the k-th rotated file of the log at path (k >= 1).
func rotatedPath(path string, k int) string {
	if k == 1 {
		return path + ".1"
	}
	return path + "." + strconv.Itoa(k) + ".gz"
}

// indexPath is the index of the log file at path (a log or a rotated one:
// "x.log.idx", "x.log.1.idx", "x.log.2.idx" for "x.log.2.gz").
func indexPath(file string) string {
	return strings.TrimSuffix(file, ".gz") + ".idx"
}

// hostLogs is the host's log policy with its defaults filled in.
func (d *Driver) hostLogs() LogPolicy {
	return d.Logs.over(LogPolicy{MaxSize: DefaultLogMaxBytes, Keep: DefaultLogKeep, MaxAge: DefaultLogMaxAge})
}

// rotate rotates the log at path if it is full under pol.
func (d *Driver) rotate(path string, pol LogPolicy) {
	if pol.MaxSize <= 0 {
		return
	}
	d.rotMu.Lock()
	defer d.rotMu.Unlock()
	st, err := os.Stat(path)
	if err != nil || st.Size() < pol.MaxSize {
		return
	}
	if err := rotateFiles(path, max(pol.Keep, 1)); err != nil {
		d.log.Warn("process: log rotation", zap.String("file", path), zap.Error(err))
	}
	delete(d.samples, path)
}

// rotateFiles shifts the rotated files of the log at path by one (the
// oldest beyond keep removed, "<log>.1" compressed to "<log>.2.gz"), then
// copies the log to "<log>.1" and truncates it; each file's index moves
// with it.
func rotateFiles(path string, keep int) error {
	removeFile(rotatedPath(path, keep))
	removeFile(indexPath(rotatedPath(path, keep)))
	for k := keep - 1; k >= 2; k-- {
		renameIfExists(rotatedPath(path, k), rotatedPath(path, k+1))
		renameIfExists(indexPath(rotatedPath(path, k)), indexPath(rotatedPath(path, k+1)))
	}
	if keep >= 2 {
		if err := compressFile(path+".1", rotatedPath(path, 2)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		renameIfExists(indexPath(path+".1"), indexPath(rotatedPath(path, 2)))
	}
	removeFile(path + ".1")
	removeFile(indexPath(path + ".1"))
	if err := copyFile(path, path+".1"); err != nil {
		return err
	}
	if err := os.Truncate(path, 0); err != nil {
		return err
	}
	renameIfExists(indexPath(path), indexPath(path+".1"))
	return nil
}

func removeFile(path string) { _ = os.Remove(path) }

func renameIfExists(from, to string) { _ = os.Rename(from, to) }

// copyFile copies src to dst (replaced), with src's mode.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, logMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// compressFile writes src gzip-compressed to dst (through a temporary file:
// dst is whole or absent) with src's modification time, and removes src.
func compressFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, logMode)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp, st.ModTime(), st.ModTime())
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		removeFile(tmp)
		return err
	}
	removeFile(src)
	return nil
}

// forgetSamples drops the last samples of logs no process writes now:
// every job run has a log of its own, and every service ever started here
// one, and their samples had been kept for as long as the worker ran (an
// every-minute job, half a million a year). A log whose process starts
// again is sampled at once, as a new one.
func (d *Driver) forgetSamples(running map[string]LogPolicy) {
	d.rotMu.Lock()
	defer d.rotMu.Unlock()
	for path := range d.samples {
		if _, ok := running[path]; !ok {
			delete(d.samples, path)
		}
	}
}

// markStart records in the log's index that a run of the service begins
// at the log's current end.
func (d *Driver) markStart(path string) {
	d.rotMu.Lock()
	defer d.rotMu.Unlock()
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	now := time.Now()
	appendIndex(path, fmt.Sprintf("%d %d start\n", now.UnixMilli(), size))
	d.samples[path] = logSample{at: now, size: size}
}

// sample records the log's size in its index when it is due (sampleEvery,
// sampleBytes, sampleIdle).
func (d *Driver) sample(path string) {
	st, err := os.Stat(path)
	if err != nil {
		return
	}
	d.rotMu.Lock()
	defer d.rotMu.Unlock()
	now, size := time.Now(), st.Size()
	last, ok := d.samples[path]
	if ok && (size == last.size || now.Sub(last.at) < sampleEvery ||
		(size-last.size < sampleBytes && size > last.size && now.Sub(last.at) < sampleIdle)) {
		return
	}
	appendIndex(path, fmt.Sprintf("%d %d\n", now.UnixMilli(), size))
	d.samples[path] = logSample{at: now, size: size}
	if st, err := os.Stat(indexPath(path)); err == nil && st.Size() > indexMax {
		thinIndex(path)
	}
}

// thinIndex rewrites the index of the log at path without every other
// sample (the starts, and the last sample, kept).
func thinIndex(path string) {
	marks := readIndex(path)
	var b strings.Builder
	odd := false
	for i, m := range marks {
		if !m.Start && i < len(marks)-1 {
			if odd = !odd; !odd {
				continue
			}
		}
		fmt.Fprintf(&b, "%d %d", m.At.UnixMilli(), m.Offset)
		if m.Start {
			b.WriteString(" start")
		}
		b.WriteByte('\n')
	}
	tmp := indexPath(path) + ".tmp"
	if os.WriteFile(tmp, []byte(b.String()), logMode) == nil {
		renameIfExists(tmp, indexPath(path))
	}
}

// appendIndex appends a line to the index of the log at path.
func appendIndex(path, line string) {
	f, err := os.OpenFile(indexPath(path), os.O_WRONLY|os.O_CREATE|os.O_APPEND, logMode)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	f.Close()
}

// logMark is a line of a log's index: at At the file had Offset bytes
// (Start: a run of the service began there).
type logMark struct {
	At     time.Time
	Offset int64
	Start  bool
}

// readIndex reads the index of the log file at file (none: nil).
func readIndex(file string) []logMark {
	f, err := os.Open(indexPath(file))
	if err != nil {
		return nil
	}
	defer f.Close()
	var marks []logMark
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		ms, err1 := strconv.ParseInt(fields[0], 10, 64)
		off, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 != nil || err2 != nil || off < 0 {
			continue
		}
		marks = append(marks, logMark{At: time.UnixMilli(ms), Offset: off, Start: len(fields) > 2 && fields[2] == "start"})
	}
	return marks
}

// prune removes the files of logs in the log directory that were not
// written for their policy's MaxAge (the running processes' own policy,
// the host's for the others), except the log a running process writes.
func (d *Driver) prune(running map[string]LogPolicy) {
	if d.logDir == "" {
		return
	}
	entries, err := os.ReadDir(d.logDir)
	if err != nil {
		return
	}
	host := d.hostLogs()
	now := time.Now()
	for _, e := range entries {
		name := e.Name()
		i := strings.LastIndex(name, ".log")
		if i < 0 || e.IsDir() {
			continue
		}
		log := filepath.Join(d.logDir, name[:i+len(".log")])
		pol, live := running[log]
		if live && name == filepath.Base(log) {
			continue // the file a running service writes
		}
		if !live {
			pol = host
		}
		if pol.MaxAge <= 0 {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < pol.MaxAge {
			continue
		}
		if strings.HasSuffix(name, ".idx") {
			// An index goes with its file: kept while the file is.
			if _, err := os.Stat(strings.TrimSuffix(filepath.Join(d.logDir, name), ".idx")); err == nil {
				continue
			}
			if _, err := os.Stat(strings.TrimSuffix(filepath.Join(d.logDir, name), ".idx") + ".gz"); err == nil {
				continue
			}
		}
		removeFile(filepath.Join(d.logDir, name))
		d.log.Info("process: log file past its age removed", zap.String("file", name), zap.Duration("maxAge", pol.MaxAge))
	}
}

// rotator rotates the logs of running processes that grew full, samples
// them into their indexes, and prunes old log files.
func (d *Driver) rotator() {
	defer d.wg.Done()
	var lastPrune time.Time
	for {
		select {
		case <-d.quit:
			return
		case <-time.After(rotateEvery):
		}
		if d.logDir == "" {
			continue
		}
		running := map[string]LogPolicy{}
		d.mu.Lock()
		for _, p := range d.procs {
			select {
			case <-p.exited:
			default:
				if p.logPath != "" {
					running[p.logPath] = p.logs // the legacy one for some adopted processes
				}
			}
		}
		d.mu.Unlock()
		d.forgetSamples(running)
		host := d.hostLogs()
		for path, pol := range running {
			pol = pol.over(host)
			d.rotate(path, pol)
			d.sample(path)
			running[path] = pol
		}
		if time.Since(lastPrune) >= pruneEvery {
			lastPrune = time.Now()
			d.prune(running)
		}
	}
}
