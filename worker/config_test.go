package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testFlags is the worker's own flag set.
func testFlags(t *testing.T) (*flag.FlagSet, *options) {
	t.Helper()
	var o options
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	registerFlags(fs, &o)
	return fs, &o
}

// Every flag of the worker can be written in the file, under its name.
func TestConfigTakesEveryFlag(t *testing.T) {
	fs, _ := testFlags(t)
	require.NoError(t, fs.Parse(nil))
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "config" && f.Name != "version" {
			names = append(names, f.Name)
		}
	})
	require.Greater(t, len(names), 25)
	for _, name := range names {
		fs, _ := testFlags(t)
		require.NoError(t, fs.Parse(nil))
		value := fs.Lookup(name).DefValue
		if value == "" {
			value = "x"
		}
		require.NoError(t, applyConfig(fs, writeConfig(t, name+": \""+value+"\"\n")), name)
		require.True(t, fs.Lookup(name).Value.String() == value, name)
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "worker.yaml")
	require.NoError(t, os.WriteFile(f, []byte(text), 0o644))
	return f
}

func TestConfigSetsEveryFlagItNamesAndTheCommandLineWins(t *testing.T) {
	fs, o := testFlags(t)
	require.NoError(t, fs.Parse([]string{"--pool-size", "3"}))
	file := writeConfig(t, `
address: temporal.example.com:7233
namespace: steward
host: web-1
pool-size: 20
usage-interval: 30s
eager-actions: true
trusted-keys: [/etc/steward/a.pub, /etc/steward/b.pub]
tls: {cert: /c.pem, key: /c.key, ca: /ca.pem, serverName: temporal.example.com}
apiKey: {file: /etc/steward/api-key}
stateDir: /srv/steward/state
logMaxSize: 20Mi
log-keep: 7
logMaxAge: 14d
`)
	require.NoError(t, applyConfig(fs, file))
	require.Equal(t, "temporal.example.com:7233", o.conn.Address)
	require.Equal(t, "steward", o.conn.Namespace)
	require.Equal(t, "web-1", o.host)
	require.Equal(t, 3, o.poolSize, "the command line wins")
	require.Equal(t, 30*time.Second, o.usageInterval)
	require.True(t, o.eagerActions)
	require.Equal(t, "/etc/steward/a.pub,/etc/steward/b.pub", o.trustedKeys)
	require.Equal(t, []string{"/c.pem", "/c.key", "/ca.pem", "temporal.example.com"}, []string{o.conn.TLSCert, o.conn.TLSKey, o.conn.TLSCA, o.conn.TLSServerName})
	require.Equal(t, "/etc/steward/api-key", o.conn.APIKeyFile)
	require.Equal(t, "/srv/steward/state", o.stateDir, "a key in camelCase")
	require.Equal(t, int64(20<<20), o.logs.MaxSize)
	require.Equal(t, 7, o.logs.Keep)
	require.Equal(t, 14*24*time.Hour, o.logs.MaxAge)
}

func TestConfigErrorsNameTheFileAndTheKey(t *testing.T) {
	for text, want := range map[string]string{
		"pool-sise: 3\n":                   "pool-sise: unknown key (the keys are the flags' names, or the same in camelCase: worker -h)",
		"stateDir: /a\nstate-dir: /b\n":    "state-dir and stateDir are the same setting: give it once",
		"logMaxSize: 1x\n":                 `logMaxSize: invalid value "1x"`,
		"pool-size: many\n":                `pool-size: invalid value "many"`,
		"usage-interval: 10 parsecs\n":     `usage-interval: invalid value "10 parsecs": parse error`,
		"tls: {cert: /c, clientKey: /k}\n": "tls.clientKey: unknown key (want ca, cert, key, serverName)",
		"tls: /c.pem\n":                    "tls: want a mapping of ca, cert, key, serverName",
		"host: {name: x}\n":                "host: want a value or a list of values",
		"host: a\nhost: b\n":               `mapping key "host" already defined`,
		"config: other.yaml\n":             "config: unknown key",
		"trusted-keys: [a,b, c]\n":         "",
		"pool-size:\n":                     "pool-size: no value",
		"[1, 2]\n":                         "--config",
	} {
		fs, _ := testFlags(t)
		require.NoError(t, fs.Parse(nil))
		file := writeConfig(t, text)
		err := applyConfig(fs, file)
		if want == "" {
			require.NoError(t, err, text)
			continue
		}
		require.Error(t, err, text)
		require.Contains(t, err.Error(), "--config "+file, text)
		require.Contains(t, err.Error(), want, text)
	}
	fs, _ := testFlags(t)
	require.NoError(t, fs.Parse(nil))
	require.ErrorContains(t, applyConfig(fs, "/nonexistent/worker.yaml"), "--config: open /nonexistent/worker.yaml")
}

// A --config with flow collections nested deep parsed into gigabytes (the
// parser copies the path at every level): refused before it is parsed.
func TestConfig_DeepNestingIsRefusedBeforeParsing(t *testing.T) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var o options
	registerFlags(fs, &o)
	require.NoError(t, fs.Parse(nil))
	file := writeConfig(t, "host: a\nvars: "+strings.Repeat("[", 40000)+strings.Repeat("]", 40000)+"\n")
	require.ErrorContains(t, applyConfig(fs, file), "more than 256 deep")
}
