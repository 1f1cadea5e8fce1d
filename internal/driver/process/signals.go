package process

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A signal ignored when this process began stays ignored across exec: a
// worker started under nohup (SIGHUP), or as a shell's background job
// (SIGINT, SIGQUIT), passed it on to every service it started, and a
// service cannot even trap a signal ignored on entry (POSIX shells do not),
// so a reload by SIGHUP never reached its handler (found by running the
// tests under nohup). exec resets a caught signal to its default, so each
// such signal is caught here and dropped: this process still ignores it,
// and its services begin with the default, as systemd's do.
var defaultSignalsOnce sync.Once

// servicesGetDefaultSignals makes the signals this process was started
// ignoring caught instead (once per process).
func servicesGetDefaultSignals() {
	defaultSignalsOnce.Do(func() {
		var sigs []os.Signal
		for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM} {
			if signal.Ignored(s) {
				sigs = append(sigs, s)
			}
		}
		if len(sigs) == 0 {
			return
		}
		// Never read: package signal drops what a full channel cannot
		// take, so the signals stay as good as ignored here.
		signal.Notify(make(chan os.Signal, 1), sigs...)
	})
}
