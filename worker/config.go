package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/steward-sh/steward/internal/spec"
)

// Configuration file (`worker --config FILE`).
//
// A YAML mapping whose keys are the flags' names, each with the value the
// flag would take (a list for a comma-separated flag), and two groups for
// the connection:
//
//	address: temporal.example.com:7233
//	namespace: steward
//	tls: {cert: /etc/steward/tls/worker.pem, key: /etc/steward/tls/worker.key, ca: /etc/steward/tls/ca.pem, serverName: temporal.example.com}
//	apiKey: {file: /etc/steward/api-key}
//	host: web-1
//	state-dir: /var/lib/steward
//	log-dir: /var/log/steward
//	policy: /etc/steward/policy.yaml
//	trusted-keys: [/etc/steward/ops.pub]
//
// A flag given on the command line wins over the file. An unknown key, a
// key given twice, a value of the wrong type and a value its flag refuses
// are errors that name the file and the key; the worker exits 2 before it
// connects.

// configGroups maps the file's connection groups to flags.
var configGroups = map[string]map[string]string{
	"tls":    {"cert": "tls-cert", "key": "tls-key", "ca": "tls-ca", "serverName": "tls-server-name"},
	"apiKey": {"file": "api-key-file"},
}

// maxConfigBytes bounds a --config file (one is a few hundred bytes).
const maxConfigBytes = 1 << 20

// applyConfig sets, from file, every flag of fs the command line did not
// set (fs is parsed).
func applyConfig(fs *flag.FlagSet, file string) error {
	data, err := spec.ReadBounded(file, maxConfigBytes)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	if len(data) > maxConfigBytes {
		return fmt.Errorf("--config %s: over %d bytes", file, maxConfigBytes)
	}
	if err := spec.CheckYAML(data); err != nil { // (nesting and aliases that parse into gigabytes)
		return fmt.Errorf("--config %s: %w", file, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("--config %s: %s", file, yaml.FormatError(err, false, false))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := func(key, name string, v any) error {
		if given[name] {
			return nil // the command line wins
		}
		s, err := flagValue(v)
		if err != nil {
			return fmt.Errorf("--config %s: %s: %w", file, key, err)
		}
		if err := fs.Set(name, s); err != nil {
			return fmt.Errorf("--config %s: %s: invalid value %q: %v", file, key, s, err)
		}
		return nil
	}
	seen := map[string]string{} // flag name: the key that set it
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		v := doc[key]
		if group, ok := configGroups[key]; ok {
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("--config %s: %s: want a mapping of %s", file, key, strings.Join(slices.Sorted(maps.Keys(group)), ", "))
			}
			for _, sub := range slices.Sorted(maps.Keys(m)) {
				name, ok := group[sub]
				if !ok {
					return fmt.Errorf("--config %s: %s.%s: unknown key (want %s)", file, key, sub, strings.Join(slices.Sorted(maps.Keys(group)), ", "))
				}
				if err := set(key+"."+sub, name, m[sub]); err != nil {
					return err
				}
			}
			continue
		}
		name := kebab(key)
		if name == "config" || name == "version" || fs.Lookup(name) == nil {
			return fmt.Errorf("--config %s: %s: unknown key (the keys are the flags' names, or the same in camelCase: worker -h)", file, key)
		}
		if other, twice := seen[name]; twice {
			return fmt.Errorf("--config %s: %s and %s are the same setting: give it once", file, other, key)
		}
		seen[name] = key
		if err := set(key, name, v); err != nil {
			return err
		}
	}
	return nil
}

// kebab is a camelCase key as the flag's name ("stateDir": "state-dir");
// a flag's own name is unchanged.
func kebab(key string) string {
	var b strings.Builder
	for _, r := range key {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// flagValue is v as a flag takes it: a scalar as written, a list of
// scalars comma-separated.
func flagValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", errors.New("no value")
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int, int64, uint64, float64:
		return fmt.Sprint(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := flagValue(e)
			if err != nil {
				return "", err
			}
			if _, isList := e.([]any); isList || strings.Contains(s, ",") {
				return "", fmt.Errorf("item %d: want a plain value without a comma", i)
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("want a value or a list of values, not %T", v)
}
