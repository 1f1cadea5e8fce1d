package process

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/steward-sh/steward/internal/cgroup"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// Services outlive their worker.
//
// A process is started in a session and process group of its own, without
// Pdeathsig, writing its log file itself: when its worker exits (a crash,
// kill -9, SIGTERM, an upgrade) it keeps running. Its instance ID names it
// for good: "proc/<pid>/<start ticks>@<workflow>", the start time in clock
// ticks since boot from /proc/PID/stat, so a reused pid is never taken for
// it. The next worker of the host adopts it:
//
//   - at its start (Recover), from the records in StateDir (one JSON file
//     per workflow, named as logfile.go says, written when a start
//     succeeds, removed when the process ends or is stopped): a process
//     that still runs is adopted and watched; one that ended meanwhile is
//     reported to its workflow at once (exit code unknown), which starts it
//     again. A record under an older worker's name is moved to its own
//     name first;
//   - without a record (the state directory was lost), at the first action
//     that names the instance (the periodic observe, a stop, a restart).
//
// An adopted process is not the worker's child: its end is seen through a
// pidfd (Linux), and its exit code is not known (the reason says so).
// process.dieWithWorker: true keeps the old behaviour (Pdeathsig; Close
// kills it); its record lets the next worker report its end at once.

// record is what StateDir keeps of a process that outlives its worker.
type record struct {
	WorkflowID    string `json:"workflowId"`
	Instance      string `json:"instance"`
	PID           int    `json:"pid"`
	Ticks         uint64 `json:"ticks"`
	StopSignal    int    `json:"stopSignal"`
	Success       []int  `json:"successExitCodes"`
	Health        *Probe `json:"health,omitempty"`
	DieWithWorker bool   `json:"dieWithWorker,omitempty"`
	// NotifySocket is its notification socket's name (process.notify),
	// Watchdog its watchdog period.
	NotifySocket string        `json:"notifySocket,omitempty"`
	Watchdog     time.Duration `json:"watchdog,omitempty"`
	// Cgroup is its group (process.resources), MemoryMax its memory
	// limit, RestartOnMemory the memory it is restarted over.
	Cgroup          *cgroup.Group `json:"cgroup,omitempty"`
	MemoryMax       int64         `json:"memoryMax,omitempty"`
	RestartOnMemory int64         `json:"restartOnMemory,omitempty"`
	// Starting: its start had not succeeded yet. The next worker ends such
	// a process: its start is retried (it would run twice otherwise).
	Starting bool `json:"starting,omitempty"`
	// LogFile is the name of the log file it writes, in the log directory
	// (none in an older worker's record: the legacy name, logfile.go).
	LogFile string `json:"logFile,omitempty"`
	// Logs is its service's log policy (process.logs; nil: the host's).
	Logs *LogPolicy `json:"logs,omitempty"`
	// Boot is the ID of the host's boot it was started in (none in an
	// older worker's record): a record of an earlier boot is of a process
	// the host's reboot ended.
	Boot string `json:"boot,omitempty"`
	// ExitFile is where a job's shim notes how its command ended; Job:
	// the process is a job's run.
	ExitFile string `json:"exitFile,omitempty"`
	Job      bool   `json:"job,omitempty"`
}

// endedByReboot says whether the process of rec, which no longer runs,
// ended with an earlier boot of the host: its record names another boot,
// or (an older worker's record) was last written before this boot began.
func endedByReboot(rec record, file string, now Boot) bool {
	if rec.Boot != "" {
		return now.ID != "" && rec.Boot != now.ID
	}
	st, err := os.Stat(file)
	return err == nil && !now.At.IsZero() && st.ModTime().Before(now.At)
}

// recordPath is the file of wfID's record (its name: logfile.go).
func (d *Driver) recordPath(wfID string) string {
	return filepath.Join(d.StateDir, fileStem(wfID)+".json")
}

// legacyRecordPath is the file of wfID's record as older workers named it
// (5b9cb0e and later, up to this layout: logfile.go). That name may be
// another workflow's too ("a/b_c" and "a_b/c"): a record found under it is
// taken only for the workflow ID stored inside it.
func (d *Driver) legacyRecordPath(wfID string) string {
	return filepath.Join(d.StateDir, legacyStem(wfID)+".json")
}

// errRecordOfAnother: the file a workflow's record goes to holds the
// record of another workflow; it is neither overwritten nor removed.
var errRecordOfAnother = errors.New("process: the record file holds another workflow's record")

// readRecord reads the record in path.
func readRecord(path string) (record, error) {
	var r record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// recordOf returns wfID's record and its file: under its name, or under
// the legacy name (an older worker's record that no Recover moved yet).
// A file that holds another workflow's record is not wfID's, whatever its
// name. Call with recMu held.
func (d *Driver) recordOf(wfID string) (record, string, bool) {
	for _, path := range []string{d.recordPath(wfID), d.legacyRecordPath(wfID)} {
		if r, err := readRecord(path); err == nil && r.WorkflowID == wfID {
			return r, path, true
		}
	}
	return record{}, "", false
}

// recordOwner returns an error naming both workflows when wfID's record
// file holds the record of another workflow: a start of wfID is refused
// (before anything runs) rather than overwrite it. Unreadable files are
// not anyone's: they are written over.
func (d *Driver) recordOwner(wfID string) error {
	if d.StateDir == "" {
		return nil
	}
	path := d.recordPath(wfID)
	d.recMu.Lock()
	defer d.recMu.Unlock()
	if r, err := readRecord(path); err == nil && r.WorkflowID != wfID {
		return driver.Permanent(fmt.Errorf("process: not starting workflow %q: its record file %s holds the record of workflow %q (instance %s), which it must not overwrite: two workflow IDs map to one file name; stop %q and move that file away",
			wfID, path, r.WorkflowID, r.Instance, r.WorkflowID))
	}
	return nil
}

// record writes p's record (starting: its start has not succeeded yet).
// One that dies with its worker is recorded too: the next worker finds it
// ended and reports that at once.
func (d *Driver) record(p *proc, starting bool) {
	d.writeRecord(p, starting, false)
}

// writeRecord writes p's record; unlessOther: not over another instance's
// of p's workflow. Never over the record of another workflow. A record of
// p under the legacy name is removed once written under its own.
func (d *Driver) writeRecord(p *proc, starting, unlessOther bool) {
	if d.StateDir == "" || p.ticks == 0 {
		return
	}
	rec := record{WorkflowID: p.wfID, Instance: p.id, PID: p.pid, Ticks: p.ticks, StopSignal: int(p.stopSignal),
		Success: p.success, Health: p.health, DieWithWorker: p.dieWithWorker, Starting: starting, Watchdog: p.watchdog,
		Cgroup: p.cgroup, MemoryMax: p.memoryMax, RestartOnMemory: p.restartOnMemory}
	if p.logs != (LogPolicy{}) {
		rec.Logs = &p.logs
	}
	rec.NotifySocket = p.notifyName
	rec.Boot = CurrentBoot().ID
	rec.ExitFile, rec.Job = p.exitFile, p.job
	rec.LogFile = logName(p.wfID)
	if p.logPath != "" {
		rec.LogFile = filepath.Base(p.logPath)
	}
	b, _ := json.Marshal(rec)
	path := d.recordPath(p.wfID)
	d.recMu.Lock()
	defer d.recMu.Unlock()
	if old, err := readRecord(path); err == nil && old.WorkflowID != p.wfID {
		d.log.Warn("process: not recorded: its record file holds another workflow's record (it is adopted at its next observe instead)",
			zap.String("instance", p.id), zap.String("file", path), zap.String("recordOf", old.WorkflowID), zap.Error(errRecordOfAnother))
		return
	}
	if old, _, ok := d.recordOf(p.wfID); unlessOther && ok && old.Instance != p.id {
		return // a newer instance of the workflow is recorded
	}
	err := os.MkdirAll(d.StateDir, 0o700)
	if err == nil {
		tmp := path + ".tmp"
		if err = os.WriteFile(tmp, b, 0o600); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	if err != nil {
		d.log.Warn("process: cannot record the process for the next worker (it is adopted at its next observe instead)", zap.String("instance", p.id), zap.Error(err))
		return
	}
	d.dropLegacyRecord(p)
}

// unrecord removes p's record, if it is still p's: a record of another
// instance, or of another workflow, stays.
func (d *Driver) unrecord(p *proc) {
	if d.StateDir == "" {
		return
	}
	path := d.recordPath(p.wfID)
	d.recMu.Lock()
	defer d.recMu.Unlock()
	if b, err := os.ReadFile(path); err == nil {
		var r record
		if json.Unmarshal(b, &r) != nil || r.WorkflowID == p.wfID && r.Instance == p.id {
			_ = os.Remove(path) // p's, or no one's (unreadable)
		}
	}
	if p.exitFile != "" {
		_ = os.Remove(p.exitFile) // its end is told (or recorded until it is)
	}
	d.dropLegacyRecord(p)
}

// dropLegacyRecord removes the record of p under the legacy name: only if
// it is p's (its workflow and instance). Call with recMu held.
func (d *Driver) dropLegacyRecord(p *proc) {
	path := d.legacyRecordPath(p.wfID)
	if r, err := readRecord(path); err == nil && r.WorkflowID == p.wfID && r.Instance == p.id {
		_ = os.Remove(path)
	}
}

// parseInstance reads "proc/<pid>/<ticks>@<workflow>".
func parseInstance(id string) (pid int, ticks uint64, wfID string, ok bool) {
	rest, found := strings.CutPrefix(id, "proc/")
	if !found {
		return 0, 0, "", false
	}
	head, wfID, found := strings.Cut(rest, "@")
	if !found {
		return 0, 0, "", false
	}
	ps, ts, found := strings.Cut(head, "/")
	if !found {
		return 0, 0, "", false
	}
	pid, err1 := strconv.Atoi(ps)
	ticks, err2 := strconv.ParseUint(ts, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 || ticks == 0 {
		return 0, 0, "", false
	}
	return pid, ticks, wfID, true
}

// held is the process of r's instance: one this driver holds, or one an
// earlier worker started that still runs (adopted now); nil if neither.
func (d *Driver) held(r driver.Request) *proc {
	d.mu.Lock()
	p, closed := d.procs[r.Instance], d.closed
	d.mu.Unlock()
	if p != nil || r.Instance == "" || closed {
		return p
	}
	pid, ticks, wfID, ok := parseInstance(r.Instance)
	if !ok {
		return nil
	}
	if d.AdoptRecordedOnly {
		// Only what this host's workers started (their record says so),
		// for the workflow that asks, as recorded: an instance named in
		// a request alone could be any process of the host.
		// A record file that holds another workflow's record is not this
		// one's (recordOf).
		d.recMu.Lock()
		rec, _, found := d.recordOf(wfID)
		d.recMu.Unlock()
		if !found || rec.Instance != r.Instance || wfID != r.WorkflowID || rec.Starting {
			return nil
		}
		return d.adopt(rec, true)
	}
	rec := record{WorkflowID: wfID, Instance: r.Instance, PID: pid, Ticks: ticks, StopSignal: int(syscall.SIGTERM), Success: []int{0}}
	if d.logDir != "" {
		// No record says which log it writes: the legacy one if only that
		// exists (an older worker started it).
		rec.LogFile = filepath.Base(readPath(d.logDir, wfID))
	}
	if c, err := ParseConfig(r.Spec.Process); err == nil {
		rec.StopSignal, rec.Success, rec.Health, rec.DieWithWorker = int(c.StopSignal), c.SuccessExitCodes, c.Health, c.DieWithWorker
	}
	return d.adopt(rec, true)
}

// adopt takes over the process of rec if it still runs (same pid, same
// start time), watching it for its end; nil if it does not.
func (d *Driver) adopt(rec record, lazily bool) *proc {
	if t, err := startTicks(rec.PID); err != nil || t != rec.Ticks {
		return nil
	}
	p := &proc{id: rec.Instance, wfID: rec.WorkflowID, pid: rec.PID, ticks: rec.Ticks, exited: make(chan struct{}),
		stopSignal: syscall.Signal(rec.StopSignal), success: rec.Success, started: true,
		health: rec.Health, dieWithWorker: rec.DieWithWorker,
		cgroup: rec.Cgroup, memoryMax: rec.MemoryMax, restartOnMemory: rec.RestartOnMemory,
		logPath: d.adoptedLogPath(rec), exitFile: d.ownExitFile(rec), job: rec.Job}
	if rec.Logs != nil {
		p.logs = *rec.Logs
	}
	if p.stopSignal == 0 {
		p.stopSignal = syscall.SIGTERM
	}
	if h := p.health; h != nil && len(h.Exec) > 0 && h.Cred == nil {
		// A record of an older worker, or none (the spec's probe): the
		// probe runs as the process it checks runs, read from /proc, not
		// as this worker (root ran a nobody service's probe program, in
		// the worker's directory, once its record was lost).
		if cred, err := procCredential(rec.PID); err != nil {
			d.log.Warn("process: adopted without its health probe", zap.String("instance", rec.Instance), zap.Error(err))
			p.health = nil
		} else if cred.UID != uint32(os.Geteuid()) || cred.GID != uint32(os.Getegid()) {
			// (A process of the worker's own user, as a service without
			// `user` is: its probe runs as the worker, as at its start; a
			// credential would need CAP_SETGID a worker not root lacks.)
			probe := *h
			probe.Cred, probe.Dir = cred, cmp.Or(probe.Dir, "/")
			p.health = &probe
		}
	}
	if h := p.health; h != nil && len(h.Exec) > 0 && h.Path == "" {
		// An older worker's record (or, without one, the spec): its exec
		// probe resolved and checked now, as a start does; one this host's
		// policy refuses is not run.
		path, err := d.program("probe command (process.health.exec)", h.Exec[0], "")
		if err != nil {
			d.log.Warn("process: adopted without its health probe", zap.String("instance", rec.Instance), zap.Error(err))
			p.health = nil
		} else {
			probe := *h
			probe.Path = path
			p.health = &probe
		}
	}
	d.mu.Lock()
	if q := d.procs[p.id]; q != nil || d.closed {
		d.mu.Unlock()
		return q
	}
	p.notifyName, p.watchdog = rec.NotifySocket, rec.Watchdog
	if rec.NotifySocket != "" {
		// Bound again under the name the service has: its next messages
		// come here. Without it the service runs on unwatched by this
		// worker; its record keeps the name for the next one.
		if nt, err := listenNotify(rec.NotifySocket); err != nil {
			d.log.Warn("process: adopted without its notification socket", zap.String("instance", p.id), zap.Error(err))
		} else {
			p.notify = nt
			go nt.serve(p.pid)
		}
	}
	d.procs[p.id] = p
	d.wg.Add(1)
	if p.health != nil {
		d.wg.Add(1)
		go d.watchHealth(p, p.health)
	}
	if p.notify != nil && p.watchdog > 0 {
		d.wg.Add(1)
		go d.watchWatchdog(p, p.watchdog)
	}
	d.mu.Unlock()
	d.writeRecord(p, false, lazily) // lazily: never over a newer instance's record
	go d.watchAdopted(p)
	d.log.Info("process: adopted", zap.String("instance", p.id), zap.String("workflow", p.wfID))
	return p
}

// adoptedLogPath is the log file the process of rec writes (it keeps the
// file it was started with open): the one its record names, the legacy one
// for an older worker's record; "" without a log directory.
func (d *Driver) adoptedLogPath(rec record) string {
	if d.logDir == "" {
		return ""
	}
	switch rec.LogFile {
	case "", legacyLogName(rec.WorkflowID):
		return legacyLogPath(d.logDir, rec.WorkflowID)
	}
	return LogPath(d.logDir, rec.WorkflowID) // never a name the record makes up
}

// watchAdopted waits for an adopted process to end and reports it.
func (d *Driver) watchAdopted(p *proc) {
	defer d.wg.Done()
	if !waitGone(p.pid, p.ticks, d.quit) {
		return // this worker closes; the next one adopts it again
	}
	if _, err := startTicks(p.pid); err != nil {
		// Gone, not reused: what is left of its group (which pins the
		// pid while it lives) goes too.
		signalGroup(p.pid, syscall.SIGKILL)
	}
	if e, obs, ok := shimExit(p.exitFile, p.id, p.success); ok {
		d.ended(p, e, obs)
		return
	}
	d.ended(p, driver.Exit{Instance: p.id, Reason: "ended (exit code unknown: adopted from an earlier worker of this host, whose child it was)"}, driver.Crashed)
}

// Recover adopts the recorded processes of StateDir that still run, and
// reports to their workflows those that ended while no worker served this
// host (they are started again at once). It returns how many of each.
func (d *Driver) Recover(ctx context.Context) (Recovered, error) {
	var n Recovered
	if d.StateDir == "" {
		return n, nil
	}
	files, err := filepath.Glob(filepath.Join(d.StateDir, "*.json"))
	if err != nil {
		return n, err
	}
	for _, f := range files {
		rec, err := readRecord(f)
		if err != nil || rec.Instance == "" {
			d.log.Warn("process: unreadable record, removed", zap.String("file", f))
			_ = os.Remove(f)
			continue
		}
		// Everything below acts for the workflow the record names, never
		// for one its file's name might suggest.
		f, lazily, dup := d.migrate(f, rec)
		if dup {
			continue
		}
		if rec.Starting {
			// Its start never succeeded (that worker died during it): the
			// start is retried, so this copy must not run on unsupervised.
			if t, err := startTicks(rec.PID); err == nil && t == rec.Ticks {
				signalGroup(rec.PID, syscall.SIGKILL)
				d.log.Info("process: ended a process whose start was cut short", zap.String("instance", rec.Instance))
			}
			if rec.Cgroup != nil {
				d.removeCgroup(rec.Cgroup)
			}
			_ = os.Remove(f)
			continue
		}
		if d.adopt(rec, lazily) != nil {
			n.Adopted++
			continue
		}
		n.Ended++
		exit := driver.Exit{Instance: rec.Instance, Reason: "ended while no worker served this host (exit code unknown)"}
		if e, _, ok := shimExit(d.ownExitFile(rec), rec.Instance, rec.Success); ok {
			exit = e
			exit.Reason += ", while no worker served this host"
		} else if boot := CurrentBoot(); endedByReboot(rec, f, boot) {
			exit.Reason = fmt.Sprintf("host rebooted (up since %s): the process ended with its previous boot", boot.At.Format(time.RFC3339))
			n.Rebooted++
		} else if rec.Cgroup != nil && rec.Cgroup.OOMKills() > 0 {
			exit.Reason = fmt.Sprintf("out of memory (memoryMax %s), while no worker served this host", spec.FormatSize(rec.MemoryMax))
		}
		if rec.Cgroup != nil {
			d.removeCgroup(rec.Cgroup)
		}
		if rec.Job { // its run's next attempt asks this worker for its end (Run, adopting)
			d.mu.Lock()
			d.rememberEndedLocked(rec.WorkflowID, rec.Instance, exit)
			d.mu.Unlock()
		}
		if d.notifier == nil {
			removeRecordFiles(f, rec)
			continue
		}
		if err := d.notifier.NotifyExit(ctx, rec.WorkflowID, exit); err != nil {
			d.log.Warn("process: could not report an end found at recovery (kept for the next worker)", zap.String("workflow", rec.WorkflowID), zap.Error(err))
			continue
		}
		removeRecordFiles(f, rec)
	}
	return n, nil
}

// ownExitFile is rec's exit file if it is this driver's (in StateDir),
// else "".
func (d *Driver) ownExitFile(rec record) string {
	if rec.ExitFile == "" || filepath.Dir(rec.ExitFile) != filepath.Clean(d.StateDir) {
		return ""
	}
	return rec.ExitFile
}

// removeRecordFiles removes a record's file f and its job's exit file.
func removeRecordFiles(f string, rec record) {
	_ = os.Remove(f)
	if rec.ExitFile != "" && filepath.Dir(rec.ExitFile) == filepath.Dir(f) { // never a file elsewhere
		_ = os.Remove(rec.ExitFile)
	}
}

// Recovered counts what Recover found: processes adopted, and processes
// that ended while no worker served the host (Rebooted of them with an
// earlier boot of the host).
type Recovered struct {
	Adopted, Ended, Rebooted int
}

// migrate moves a record found in file f to its own name (an older
// worker's legacy name, logfile.go) and returns where it is now. When its
// own name is taken already: by a record of the same instance, f is
// removed (dup); otherwise f stays where it is, and the process it records
// is adopted lazily (never over the record under its own name).
func (d *Driver) migrate(f string, rec record) (now string, lazily, dup bool) {
	own := d.recordPath(rec.WorkflowID)
	if f == own {
		return f, false, false
	}
	d.recMu.Lock()
	defer d.recMu.Unlock()
	if cur, err := readRecord(own); err == nil {
		if cur.WorkflowID == rec.WorkflowID && cur.Instance == rec.Instance {
			_ = os.Remove(f)
			return f, false, true
		}
		return f, true, false
	} else if !errors.Is(err, fs.ErrNotExist) {
		return f, true, false
	}
	if err := os.Rename(f, own); err != nil {
		d.log.Warn("process: cannot move a record to its own name (read where it is)", zap.String("file", f), zap.String("to", own), zap.Error(err))
		return f, true, false
	}
	d.log.Info("process: record moved to its own name", zap.String("workflow", rec.WorkflowID), zap.String("from", filepath.Base(f)), zap.String("to", filepath.Base(own)))
	return own, false, false
}

// openLog opens the workflow's log file for the service to write itself
// (appending; /dev/null without a log directory), rotated first if full
// under logs (its service's policy), and marks a start in its index.
func (d *Driver) openLog(wfID string, logs LogPolicy) (*os.File, error) {
	if d.logDir == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(d.logDir, 0o750); err != nil {
		return nil, err
	}
	path := LogPath(d.logDir, wfID)
	d.rotate(path, logs.over(d.hostLogs()))
	// A service's output often holds tokens: readable by the worker's
	// user and group only (a log an older worker made 0644 is narrowed).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, logMode)
	if err == nil {
		_ = f.Chmod(logMode)
	}
	if err == nil {
		d.markStart(path)
	}
	return f, err
}

// tail is the last lines of the workflow's log, for a failed start.
func (d *Driver) tail(wfID string) string {
	if d.logDir == "" {
		return ""
	}
	b, _, err := TailLog(d.logDir, wfID, tailLines)
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}

// procCredential is the real user, group and groups of pid, from
// /proc/PID/status.
func procCredential(pid int) (*Credential, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	var cred Credential
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		switch key {
		case "Uid", "Gid":
			if len(fields) == 0 {
				return nil, fmt.Errorf("/proc/%d/status: %s: no value", pid, key)
			}
			v, err := strconv.ParseUint(fields[0], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/status: %s: %w", pid, key, err)
			}
			if key == "Uid" {
				cred.UID = uint32(v)
			} else {
				cred.GID = uint32(v)
			}
			found++
		case "Groups":
			for _, f := range fields {
				if v, err := strconv.ParseUint(f, 10, 32); err == nil {
					cred.Groups = append(cred.Groups, uint32(v))
				}
			}
		}
	}
	if found != 2 {
		return nil, fmt.Errorf("/proc/%d/status: no Uid or Gid", pid)
	}
	return &cred, nil
}
