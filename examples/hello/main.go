// Command hello is the small HTTP service of the demo tree: steward runs it
// as a local process and checks its /health over HTTP. Kill it (kill -9) and
// watch steward start it again. SIGHUP is its reload (`starter reload`): it
// counts, logs it, and with --reload-file appends the time (Unix ns) to it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	reloadFile := flag.String("reload-file", "", "append the time of each reload (SIGHUP) to this file")
	flag.Parse()
	started := time.Now()
	var reloads atomic.Int64
	hup := make(chan os.Signal, 16)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			n := reloads.Add(1)
			if *reloadFile != "" {
				if f, err := os.OpenFile(*reloadFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintln(f, time.Now().UnixNano())
					f.Close()
				}
			}
			log.Printf("hello: reloaded (%d)", n)
		}
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "hello from pid %d, up %s, %d reloads\n", os.Getpid(), time.Since(started).Round(time.Second), reloads.Load())
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		log.Printf("hello: stopping")
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("hello: pid %d listening on %s", os.Getpid(), *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("hello: %v", err)
	}
}
