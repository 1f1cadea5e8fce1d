package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	ossignal "os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/encryption"
	"github.com/steward-sh/steward/internal/hostcheck"
	"github.com/steward-sh/steward/internal/temporalclient"
)

func codecServerCmd(g *globals) *cobra.Command {
	var listen, uiOrigin, allowedHosts, tokenFile string
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve Temporal's remote codec protocol with the encryption keys, for the Web UI and the temporal CLI (--codec-endpoint)",
		Long: `Serve Temporal's remote codec protocol (POST /encode, /decode) with the
encryption keys, for the Web UI (its codec endpoint) and the temporal CLI
(--codec-endpoint). It decrypts whatever it is sent: keep it where only
those who may read the payloads reach it (docs/security.md).

It answers only requests for its own names (the Host header): the host it
listens on, localhost (and 127.0.0.1, ::1 on loopback; the machine's
addresses when it listens on all of them), and --allowed-hosts; others get
421, so a web page cannot reach it through a name of its own (DNS
rebinding). With --token-file, /encode and /decode need
"Authorization: Bearer TOKEN" (the temporal CLI: --codec-auth "Bearer TOKEN").`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			codec, err := g.conn.Codec()
			if err != nil {
				return badInput("%v", err)
			}
			if codec == nil {
				return badInput("codec-server needs the keys: --encryption-key-file FILE or %s", temporalclient.EncryptionKeyEnv)
			}
			token := ""
			if tokenFile != "" {
				if token, err = readTokenFile("--token-file", tokenFile); err != nil {
					return err
				}
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return badInput("--listen %s: %v", listen, err)
			}
			check, err := hostChecker(listen, l, allowedHosts)
			if err != nil {
				l.Close()
				return err
			}
			auth := "no token"
			if token != "" {
				auth = "token from " + tokenFile
			} else {
				// Loopback is every local user's: without a token any of
				// them decrypts with these keys what they can read.
				fmt.Fprintln(cmd.ErrOrStderr(), "codec-server: warning: no --token-file: whoever reaches --listen (every local user, on loopback) can decode and encode with these keys")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "codec server on http://%s (Web UI origin: %s; %s); Ctrl-C stops it\n", l.Addr(), orNone(uiOrigin), auth)
			ctx, stop := ossignal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return serveHTTP(ctx, l, check, encryption.Handler(codec, uiOrigin, token), "codec server")
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8234", "address to serve on (keep it where only those who may read the payloads reach it)")
	cmd.Flags().StringVar(&uiOrigin, "ui-origin", "", "the Web UI's origins (scheme://host:port, comma-separated) that browsers may call it from; empty: none, * any (any web page then can)")
	cmd.Flags().StringVar(&allowedHosts, "allowed-hosts", "", "more names (NAME or NAME:PORT, comma-separated) that requests may give as Host, beside the listen address's host and localhost (others get 421)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "require Authorization: Bearer TOKEN on /encode and /decode, TOKEN being this file's content, trimmed (never printed or logged)")
	return cmd
}

// readTokenFile reads a token from path (flag names it in errors): the
// file's content trimmed of white space, which must not be empty.
func readTokenFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", badInput("%s: %v", flag, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", badInput("%s %s is empty", flag, path)
	}
	return token, nil
}

// hostChecker is the Host check of a server listening on l (listen as
// given: a host that is a name is allowed as given), with the names of
// --allowed-hosts.
func hostChecker(listen string, l net.Listener, allowedHosts string) (*hostcheck.Checker, error) {
	names := hostcheck.List(allowedHosts)
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && net.ParseIP(h) == nil {
		names = append(names, h)
	}
	c, err := hostcheck.New(l.Addr().String(), names)
	if err != nil {
		return nil, badInput("%v", err)
	}
	return c, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// serveHTTP serves h on l behind the Host check until ctx ends.
func serveHTTP(ctx context.Context, l net.Listener, check *hostcheck.Checker, h http.Handler, what string) error {
	// ReadTimeout bounds a request's body too (a client that trickles
	// one holds its connection); no WriteTimeout: the console streams.
	srv := &http.Server{Handler: check.Handler(h), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	return serveUntilDone(ctx, srv, l, what)
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
