package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	ossignal "os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/encryption"
	"github.com/steward-sh/steward/internal/temporalclient"
)

func codecServerCmd(g *globals) *cobra.Command {
	var listen, uiOrigin string
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve Temporal's remote codec protocol with the encryption keys, for the Web UI and the temporal CLI (--codec-endpoint)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			codec, err := g.conn.Codec()
			if err != nil {
				return badInput("%v", err)
			}
			if codec == nil {
				return badInput("codec-server needs the keys: --encryption-key-file FILE or %s", temporalclient.EncryptionKeyEnv)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return badInput("--listen %s: %v", listen, err)
			}
			srv := &http.Server{Handler: encryption.Handler(codec, uiOrigin), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(cmd.OutOrStdout(), "codec server on http://%s (Web UI origin: %s); Ctrl-C stops it\n", l.Addr(), orNone(uiOrigin))
			ctx, stop := ossignal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return serveUntilDone(ctx, srv, l, "codec server")
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8234", "address to serve on (keep it where only those who may read the payloads reach it)")
	cmd.Flags().StringVar(&uiOrigin, "ui-origin", "", "the Web UI's origins (scheme://host:port, comma-separated) that browsers may call it from; empty: none, * any (any web page then can)")
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// serveUntilDone serves on l until ctx ends (Ctrl-C, SIGTERM), then shuts
// the server down, giving requests in flight 5 s.
func serveUntilDone(ctx context.Context, srv *http.Server, l net.Listener, what string) error {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return failure("%s: %v", what, err)
	}
	return nil
}
