package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
)

// Value is a value of `process.env` or of an http `headers` map: a literal
// string, or a reference to a secret that the host's worker resolves when an
// action runs, so that only the reference is ever in the spec, a history,
// a status, a log or a metric:
//
//	env:
//	  LOG_LEVEL: info                          # a literal
//	  DB_PASSWORD: {file: /etc/shop/db-pass}   # the file's content, trailing newline trimmed
//	  API_TOKEN: {env: SHOP_API_TOKEN}         # a variable of the worker's environment
//
// A reference names exactly one of File (an absolute path) and Env (a
// variable name); Validate says which rule a bad one breaks.
type Value struct {
	Literal string
	File    string
	Env     string
	// ref: written as a mapping (even a bad one, kept for Validate to name).
	ref bool
}

// IsRef says whether v is a reference rather than a literal.
func (v Value) IsRef() bool { return v.ref }

// Ref returns a reference, for code and tests.
func FileRef(path string) Value { return Value{File: path, ref: true} }

// EnvRef returns a reference to a variable of the worker's environment.
func EnvRef(name string) Value { return Value{Env: name, ref: true} }

// Literal returns a literal value.
func Literal(s string) Value { return Value{Literal: s} }

// String names the value without its secret: a literal as "literal", a
// reference as "file /path" or "env NAME" (never a resolved value).
func (v Value) String() string {
	switch {
	case !v.ref:
		return "literal"
	case v.File != "":
		return "file " + v.File
	default:
		return "env " + v.Env
	}
}

// MarshalJSON writes a literal as a string and a reference as {"file": P}
// or {"env": N}.
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.ref {
		return json.Marshal(v.Literal)
	}
	m := map[string]string{}
	if v.File != "" {
		m["file"] = v.File
	}
	if v.Env != "" {
		m["env"] = v.Env
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a string or a mapping with the keys file and env
// (others are errors).
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*v = Value{}
		return json.Unmarshal(b, &v.Literal)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return fmt.Errorf("want a string or a secret reference ({file: PATH} or {env: NAME}), not %s", b)
	}
	out := Value{ref: true}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var s string
		if err := json.Unmarshal(m[k], &s); err != nil {
			return fmt.Errorf("secret reference: %s must be a string", k)
		}
		switch k {
		case "file":
			out.File = s
		case "env":
			out.Env = s
		default:
			return fmt.Errorf("secret reference: unknown key %q (want file or env)", k)
		}
	}
	*v = out
	return nil
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// check adds what is wrong with v, at path.
func (v Value) check(val *validator, path string) {
	if !v.ref {
		if bytes.IndexByte([]byte(v.Literal), 0) >= 0 {
			val.add(path, "a value cannot contain NUL")
		}
		return
	}
	switch {
	case v.File != "" && v.Env != "":
		val.add(path, "a secret reference takes one of file and env, not both")
	case v.File == "" && v.Env == "":
		val.add(path, "a secret reference needs file (an absolute path) or env (a variable name)")
	case v.File != "" && !filepath.IsAbs(v.File):
		val.add(join(path, "file"), "%q is not an absolute path", v.File)
	case v.Env != "" && !envNamePattern.MatchString(v.Env):
		val.add(join(path, "env"), "%q is not a variable name", v.Env)
	}
}

// Paths is one path or a list of them (process.envFile).
type Paths []string

// UnmarshalJSON reads a string or a list of strings.
func (p *Paths) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*p = Paths{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("want a path or a list of paths, not %s", b)
	}
	*p = l
	return nil
}
