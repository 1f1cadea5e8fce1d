package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/steward-sh/steward/internal/spec"
)

// FileReader reads a secret file (a {file: PATH} reference or an
// envFile): a host's policy reads only the files it lists, by the path it
// checked (admission.Policy.ReadFile); nil reads any, as os.ReadFile.
type FileReader func(path string) ([]byte, error)

func (r FileReader) read(path string) ([]byte, error) {
	if r == nil {
		return os.ReadFile(path)
	}
	return r(path)
}

// Resolve returns what v stands for on this host, at this moment: a literal
// as written, a file's content read by read (one trailing newline, or CRLF, trimmed), a
// variable of this process's environment. Its errors name the reference
// and where it is (what: "process.env.DB_PASSWORD"), never a value, and are
// Permanent: a missing secret is not fixed by retrying the action.
func Resolve(what string, v spec.Value, read FileReader) (string, error) {
	switch {
	case !v.IsRef():
		return v.Literal, nil
	case v.File != "":
		b, err := read.read(v.File)
		if err != nil {
			return "", Permanent(fmt.Errorf("%s: secret file %s: %s", what, v.File, reason(err)))
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		return string(b), nil
	default:
		s, ok := os.LookupEnv(v.Env)
		if !ok {
			return "", Permanent(fmt.Errorf("%s: variable %s is not set in the worker's environment on this host", what, v.Env))
		}
		return s, nil
	}
}

// ResolveAll resolves every value of m (what.KEY names each).
func ResolveAll(what string, m map[string]spec.Value, read FileReader) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, err := Resolve(what+"."+k, m[k], read)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ReadEnvFile reads KEY=VALUE lines as systemd's EnvironmentFile= does:
// blank lines and lines starting with # or ; are skipped, whitespace
// around the key and before the value is trimmed, and a value in matching
// double or single quotes loses them. A line of another form is an error
// naming the file and the line number (not the line: it may hold a secret).
// The variables come back in file order (a later one wins). read reads
// the file (nil: os.ReadFile).
func ReadEnvFile(path string, read FileReader) ([][2]string, error) {
	b, err := read.read(path)
	if err != nil {
		return nil, Permanent(fmt.Errorf("envFile %s: %s", path, reason(err)))
	}
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !envKey.MatchString(k) {
			return nil, Permanent(fmt.Errorf("envFile %s line %d: not KEY=VALUE", path, n))
		}
		v = strings.TrimLeft(v, " \t")
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out = append(out, [2]string{k, v})
	}
	if err := sc.Err(); err != nil {
		return nil, Permanent(fmt.Errorf("envFile %s: %s", path, reason(err)))
	}
	return out, nil
}

// Secret is a resolved secret, for Redact: its value, and what names it in
// an error instead ("(header Authorization)").
type Secret struct{ Value, Name string }

// minRedacted is the shortest value Redact replaces: a shorter one cannot
// be told from the message's own words.
const minRedacted = 4

// minRedactedWord is the shortest word of a value Redact replaces on its
// own (the token of "Bearer TOKEN", echoed alone).
const minRedactedWord = 8

// Redact replaces in msg every secret's value, and every word of it of
// minRedactedWord characters or more, by its name: for what an error
// quotes of what came from elsewhere (a response's body, a transport
// error that names a host), which may hold a secret the request carried.
func Redact(msg string, secrets []Secret) string {
	type piece struct{ value, name string }
	var pieces []piece
	for _, s := range secrets {
		if len(s.Value) >= minRedacted {
			pieces = append(pieces, piece{s.Value, s.Name})
		}
		if words := strings.Fields(s.Value); len(words) > 1 {
			for _, w := range words {
				if len(w) >= minRedactedWord {
					pieces = append(pieces, piece{w, s.Name})
				}
			}
		}
	}
	// The longest first: a URL before its host.
	sort.SliceStable(pieces, func(i, j int) bool { return len(pieces[i].value) > len(pieces[j].value) })
	for _, p := range pieces {
		msg = strings.ReplaceAll(msg, p.value, p.name)
	}
	return msg
}

// TransportReason is what an HTTP client's error says without the method
// and the URL it quotes (a *url.Error's own error).
func TransportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// reason is an I/O error without the path it repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied (the worker's user cannot read it)"
	}
	return err.Error()
}
