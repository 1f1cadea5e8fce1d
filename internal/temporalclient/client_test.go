package temporalclient

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// Connection settings resolve like the temporal CLI's: flags over the
// environment over the profile in temporal.toml over the defaults.
func TestConfigResolvesFlagsEnvProfileAndDefaults(t *testing.T) {
	dir := t.TempDir()
	toml := filepath.Join(dir, "temporal.toml")
	require.NoError(t, os.WriteFile(toml, []byte(`
[profile.default]
address = "default-profile:7233"

[profile.prod]
address = "prod.example:7233"
namespace = "prod-ns"
api_key = "secret"
`), 0o600))
	t.Setenv("TEMPORAL_CONFIG_FILE", toml)
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY"} {
		unsetenv(t, k)
	}

	opts, err := Config{}.Options()
	require.NoError(t, err)
	require.Equal(t, "default-profile:7233", opts.HostPort, "the default profile")
	require.Equal(t, DefaultNamespace, opts.Namespace, "the default when nobody says")

	opts, err = Config{Profile: "prod"}.Options()
	require.NoError(t, err)
	require.Equal(t, "prod.example:7233", opts.HostPort)
	require.Equal(t, "prod-ns", opts.Namespace)
	require.NotNil(t, opts.Credentials, "the API key")

	t.Setenv("TEMPORAL_ADDRESS", "env:7233")
	opts, err = Config{Profile: "prod"}.Options()
	require.NoError(t, err)
	require.Equal(t, "env:7233", opts.HostPort, "the environment over the profile")

	opts, err = Config{Profile: "prod", Address: "flag:7233", Namespace: "flag-ns"}.Options()
	require.NoError(t, err)
	require.Equal(t, "flag:7233", opts.HostPort, "a flag over everything")
	require.Equal(t, "flag-ns", opts.Namespace)

	_, err = Config{Profile: "missing"}.Options()
	require.ErrorContains(t, err, "missing", "a profile asked for and not found is an error")

	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(dir, "none.toml"))
	unsetenv(t, "TEMPORAL_ADDRESS")
	opts, err = Config{}.Options()
	require.NoError(t, err)
	require.Equal(t, DefaultAddress, opts.HostPort, "no file: the default")
}

// unsetenv removes an environment variable for the test (an empty value
// counts as set).
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "") // restores the old value after the test
	require.NoError(t, os.Unsetenv(key))
}

// gRPC compression: the SDK's gzip unless "none"; anything else is refused
// with the values it takes.
func TestConfigCompression(t *testing.T) {
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	opts, err := Config{}.Options()
	require.NoError(t, err)
	require.Nil(t, opts.ConnectionOptions.GrpcCompression, "the SDK's default (gzip)")
	opts, err = Config{Compression: CompressionNone}.Options()
	require.NoError(t, err)
	require.IsType(t, &client.GrpcCompressionNone{}, opts.ConnectionOptions.GrpcCompression)
	_, err = Config{Compression: "zstd"}.Options()
	require.EqualError(t, err, `gRPC compression "zstd": want "gzip" or "none"`)
}

// Payload visits: the SDK's default unless a concurrency is set; the
// worker's (1) walks them on the task's goroutine, and the SDK takes that
// configuration (it panics at construction on one it refuses); a negative
// one is refused.
func TestConfigPayloadVisitConcurrency(t *testing.T) {
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	opts, err := Config{}.Options()
	require.NoError(t, err)
	require.Zero(t, opts.ExternalStorage.Concurrency.MaxOperationsPerMessage, "the SDK's default")
	opts, err = Config{PayloadVisitConcurrency: PayloadVisitInline}.Options()
	require.NoError(t, err)
	require.Empty(t, opts.ExternalStorage.Drivers, "no external storage")
	require.Equal(t, 1, opts.ExternalStorage.Concurrency.MaxOperationsPerMessage)
	c, err := client.NewLazyClient(opts)
	require.NoError(t, err)
	c.Close()
	_, err = Config{PayloadVisitConcurrency: -1}.Options()
	require.EqualError(t, err, "payload visit concurrency -1: want 0 (the SDK's default) or more")
}

// Plaintext tells a connection that proves nothing of the server (the
// package's default, localhost:7233) from one with TLS or an API key: the
// root worker warns of the first, where a local user can bind the port.
func TestPlaintext_TellsAConnectionWithoutTLSOrAKey(t *testing.T) {
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"} {
		unsetenv(t, k)
	}
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(t.TempDir(), "none.toml"))
	opts, err := Config{}.Options()
	require.NoError(t, err)
	require.True(t, Plaintext(opts))

	key := filepath.Join(t.TempDir(), "api.key")
	require.NoError(t, os.WriteFile(key, []byte("k\n"), 0o600))
	opts, err = Config{APIKeyFile: key}.Options()
	require.NoError(t, err)
	require.False(t, Plaintext(opts), "an API key turns TLS on")
	t.Setenv("TEMPORAL_TLS", "false")
	opts, err = Config{APIKeyFile: key}.Options()
	require.NoError(t, err)
	require.True(t, Plaintext(opts), "an API key with TLS turned off goes out in clear")
	unsetenv(t, "TEMPORAL_TLS")

	opts, err = Config{TLSServerName: "temporal.example"}.Options()
	require.NoError(t, err)
	require.False(t, Plaintext(opts))
}

// A worker checked the files its flags name, not those the environment
// (TEMPORAL_TLS_*, STEWARD_ENCRYPTION_KEY_FILE) or the client configuration
// file and its profile name, nor that file itself, which can set the
// address, turn TLS off and hold an API key (the reviewer's finding).
func TestTrustedFiles_ListsWhatTheEnvironmentAndTheProfileName(t *testing.T) {
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "TEMPORAL_TLS_SERVER_CA_CERT_PATH", EncryptionKeyEnv} {
		unsetenv(t, k)
	}
	dir := t.TempDir()
	toml := filepath.Join(dir, "temporal.toml")
	require.NoError(t, os.WriteFile(toml, []byte(`
[profile.default]
address = "prod.example:7233"
[profile.default.tls]
client_cert_path = "/etc/p/cert.pem"
client_key_path = "/etc/p/key.pem"
`), 0o600))
	t.Setenv("TEMPORAL_CONFIG_FILE", toml)
	t.Setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", "/etc/p/ca.pem")
	t.Setenv(EncryptionKeyEnv, "/etc/p/a.key, /etc/p/b.key")
	got := map[string]bool{}
	var order []string
	require.NoError(t, Config{TLSKey: "/flag/key.pem"}.TrustedFiles(func(f TrustedFile) error {
		got[f.Path] = f.Secret
		order = append(order, f.Path)
		return nil
	}))
	require.Equal(t, toml, order[0], "the configuration file is checked before it is read")
	require.Equal(t, map[string]bool{
		toml: false, "/etc/p/cert.pem": false, "/etc/p/key.pem": true, "/etc/p/ca.pem": false,
		"/flag/key.pem": true, "/etc/p/a.key": true, "/etc/p/b.key": true,
	}, got)
}
