// Package temporalclient holds what the worker and the starter both need of
// a Temporal client: dialing with steward's defaults, registering steward's
// search attributes, and pushing exits to worker workflows.
package temporalclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"

	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/encryption"
)

// Defaults when neither a flag, an environment variable nor a profile says
// otherwise.
const (
	DefaultAddress   = "localhost:7233"
	DefaultNamespace = "default"
)

// Config is how to reach Temporal. Empty fields come from the environment
// configuration the `temporal` CLI uses (go.temporal.io/sdk/contrib/envconfig:
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
// and the profiles of temporal.toml, chosen by Profile or TEMPORAL_PROFILE),
// then from the defaults; set fields (flags) override them.
type Config struct {
	Address, Namespace, Profile string
	// Compression of gRPC requests: "gzip" (the SDK's default, used when
	// empty) or "none" (cheaper on CPU, on both sides, where bandwidth is
	// not the limit, e.g. a server on the same machine).
	Compression string
	// EncryptionKeyFiles: key files of the payload codec, comma-separated
	// (the first encrypts, all decrypt; see internal/encryption). Empty:
	// STEWARD_ENCRYPTION_KEY_FILE, or no encryption.
	EncryptionKeyFiles string
	// PayloadVisitConcurrency is how many goroutines the SDK may use to
	// walk the payloads of one message (each workflow task it receives,
	// each completion it sends) for external payload storage, which
	// steward configures none of. 0 keeps the SDK's default (8: a
	// goroutine per payload field); 1 walks them on the task's own
	// goroutine. The worker uses 1 (see PayloadVisitInline).
	PayloadVisitConcurrency int
	// TLS: a client certificate and its key (mutual TLS), the CA that
	// signed the server's certificate, and the name to check it against
	// (empty: the address's host). Any of them turns TLS on; empty: the
	// environment's and the profile's (TEMPORAL_TLS_*).
	TLSCert, TLSKey, TLSCA, TLSServerName string
	// APIKeyFile holds an API key (Temporal Cloud), trimmed; empty: the
	// environment's and the profile's (TEMPORAL_API_KEY).
	APIKeyFile string
}

// PayloadVisitInline is the worker's PayloadVisitConcurrency. A worker's
// task that accepts a rollout's Update carries three payloads (the
// accepted Update's request among them); under load, the SDK's default
// walk of them took 117-224 us at the median and 3.0-4.1 ms at p99 of
// such tasks in the bench's throughput step (measured per task with
// scripts/task-breakdown.sh), inline 53-56 us and 0.4-0.5 ms
// (docs/benchmarks.md).
const PayloadVisitInline = 1

// EncryptionKeyEnv names the environment variable of the key files.
const EncryptionKeyEnv = "STEWARD_ENCRYPTION_KEY_FILE"

// Codec returns the payload codec c names (nil: none).
func (c Config) Codec() (*encryption.Codec, error) {
	files := c.EncryptionKeyFiles
	if files == "" {
		files = os.Getenv(EncryptionKeyEnv)
	}
	if files == "" {
		return nil, nil
	}
	var list []string
	for _, f := range strings.Split(files, ",") {
		if f = strings.TrimSpace(f); f != "" {
			list = append(list, f)
		}
	}
	return encryption.Load(list...)
}

// Compression values.
const (
	CompressionGzip = "gzip"
	CompressionNone = "none"
)

// Options resolves c into client options (address, namespace, TLS, API
// key, gRPC metadata).
func (c Config) Options() (client.Options, error) {
	opts, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFileProfile: c.Profile})
	if err != nil {
		return client.Options{}, fmt.Errorf("client configuration: %w", err)
	}
	if c.Address != "" {
		opts.HostPort = c.Address
	}
	if opts.HostPort == "" {
		opts.HostPort = DefaultAddress
	}
	if c.Namespace != "" {
		opts.Namespace = c.Namespace
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	codec, err := c.Codec()
	if err != nil {
		return client.Options{}, err
	}
	if codec != nil {
		opts.DataConverter = codec.DataConverter()
	}
	switch {
	case c.PayloadVisitConcurrency < 0:
		return client.Options{}, fmt.Errorf("payload visit concurrency %d: want 0 (the SDK's default) or more", c.PayloadVisitConcurrency)
	case c.PayloadVisitConcurrency > 0:
		opts.ExternalStorage = converter.ExternalStorage{
			Concurrency: converter.ExternalStorageConcurrency{MaxOperationsPerMessage: c.PayloadVisitConcurrency},
		}
	}
	if err := c.applyTLS(&opts); err != nil {
		return client.Options{}, err
	}
	switch c.Compression {
	case "", CompressionGzip:
	case CompressionNone:
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	default:
		return client.Options{}, fmt.Errorf("gRPC compression %q: want %q or %q", c.Compression, CompressionGzip, CompressionNone)
	}
	return opts, nil
}

// TrustedFile is a file a connection trusts (the server's CA, the client
// configuration) or proves itself with (a key: Secret), and what named it.
type TrustedFile struct {
	From, Path string
	Secret     bool
}

// TrustedFiles hands check, one by one, the files c reads to connect,
// wherever they are named: its own flags, the environment (TEMPORAL_TLS_*,
// EncryptionKeyEnv) or the client configuration file and its profile
// (TEMPORAL_CONFIG_FILE, or temporal.toml in the user's configuration
// directory), which may itself set the address, turn TLS off and hold an
// API key: that file first, before it is read for the paths it names. A
// worker checks each (process.SecureFile); the first refusal is returned.
func (c Config) TrustedFiles(check func(TrustedFile) error) error {
	do := func(from, path string, secret bool) error {
		if path = strings.TrimSpace(path); path == "" {
			return nil
		}
		return check(TrustedFile{From: from, Path: path, Secret: secret})
	}
	file := os.Getenv("TEMPORAL_CONFIG_FILE")
	if file == "" {
		if def := envconfig.DefaultConfigFilePath(); def != "" {
			if _, err := os.Stat(def); err == nil {
				file = def
			}
		}
	}
	if err := do("the client configuration file (TEMPORAL_CONFIG_FILE or temporal.toml)", file, false); err != nil {
		return err
	}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{ConfigFileProfile: c.Profile})
	if err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	files := []TrustedFile{
		{"--tls-ca", c.TLSCA, false},
		{"--tls-cert", c.TLSCert, false},
		{"--tls-key", c.TLSKey, true},
		{"--api-key-file", c.APIKeyFile, true},
	}
	if t := prof.TLS; t != nil {
		files = append(files,
			TrustedFile{"the profile's or TEMPORAL_TLS_* client certificate", t.ClientCertPath, false},
			TrustedFile{"the profile's or TEMPORAL_TLS_* client key", t.ClientKeyPath, true},
			TrustedFile{"the profile's or TEMPORAL_TLS_* server CA", t.ServerCACertPath, false})
	}
	keys, from := c.EncryptionKeyFiles, "--encryption-key-file"
	if keys == "" {
		keys, from = os.Getenv(EncryptionKeyEnv), EncryptionKeyEnv
	}
	for _, k := range strings.Split(keys, ",") {
		files = append(files, TrustedFile{from, k, true})
	}
	for _, f := range files {
		if err := do(f.From, f.Path, f.Secret); err != nil {
			return err
		}
	}
	return nil
}

// Plaintext reports whether opts connect without TLS: nothing then proves
// that what answers at the address is the server (an API key alone turns
// TLS on in the SDK).
func Plaintext(opts client.Options) bool {
	return opts.ConnectionOptions.TLS == nil && (opts.Credentials == nil || opts.ConnectionOptions.TLSDisabled)
}

// Dial connects as c says. metrics may be nil. It returns the namespace it
// uses.
func Dial(c Config, logger log.Logger, metrics client.MetricsHandler) (client.Client, string, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, "", err
	}
	opts.Logger, opts.MetricsHandler = logger, metrics
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach Temporal at %s (namespace %s): %w", opts.HostPort, opts.Namespace, err)
	}
	return cl, opts.Namespace, nil
}

// EnsureSearchAttributes registers the custom search attributes names
// (Keyword: steward's are workflows.SearchAttributeNames) on the namespace,
// adding only those that are missing: it is safe to call at every start,
// from every process.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string, names []string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range names {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		// Another process may have added them first.
		again, lerr := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
		if lerr == nil {
			ok := true
			for name := range missing {
				if _, there := again.GetCustomAttributes()[name]; !there {
					ok = false
				}
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// ExitNotifier pushes a driver's exit report to the worker workflow as the
// signal named signal (workflows.SignalExit). A workflow that no longer
// runs (a job's run terminated by its overlap policy, a tree deleted) has
// nothing to be told: its report is done, so that the driver forgets the
// process's record instead of keeping it, and pushing it again, at every
// worker's start.
func ExitNotifier(c client.Client, signal string) driver.Notifier {
	return driver.NotifierFunc(func(ctx context.Context, workflowID string, e driver.Exit) error {
		err := c.SignalWorkflow(ctx, workflowID, "", signal, e)
		if _, gone := errors.AsType[*serviceerror.NotFound](err); gone {
			return nil
		}
		return err
	})
}

// WorkflowRuns says whether the workflow with the given ID runs now (its
// latest run): false when it closed or there is none (a process driver's
// orphans, process.OwnerRuns).
func WorkflowRuns(c client.Client) func(ctx context.Context, workflowID string) (bool, error) {
	return func(ctx context.Context, workflowID string) (bool, error) {
		resp, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
		if _, gone := errors.AsType[*serviceerror.NotFound](err); gone {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return resp.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
	}
}

// applyTLS sets opts' TLS and API key from c's files (none set: opts as
// the environment and the profile made them). Errors name the file.
func (c Config) applyTLS(opts *client.Options) error {
	if c.APIKeyFile != "" {
		b, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			return fmt.Errorf("API key: %w", err)
		}
		key := strings.TrimSpace(string(b))
		if key == "" {
			return fmt.Errorf("API key: %s is empty", c.APIKeyFile)
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	if c.TLSCert == "" && c.TLSKey == "" && c.TLSCA == "" && c.TLSServerName == "" {
		return nil
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("TLS: a client certificate needs its key, and a key its certificate (tls cert and key)")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	if c.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS: client certificate %s and key %s: %w", c.TLSCert, c.TLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.TLSCA != "" {
		pem, err := os.ReadFile(c.TLSCA)
		if err != nil {
			return fmt.Errorf("TLS: CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("TLS: CA %s holds no PEM certificate", c.TLSCA)
		}
		cfg.RootCAs = pool
	}
	opts.ConnectionOptions.TLS = cfg
	return nil
}
