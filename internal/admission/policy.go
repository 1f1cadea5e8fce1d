package admission

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/steward-sh/steward/internal/spec"
)

// Policy is a host's command policy (`worker --policy FILE`): what the
// process specs this host runs may name.
//
//	commands:            # absolute paths or globs (filepath.Match: * does not cross /)
//	  - /usr/bin/sleep
//	  - /opt/shop/bin/*
//	users: [www-data]    # run-as users a spec may name (empty: only the worker's own)
//	groups: [www-data]   # run-as groups a spec may name (empty: only the worker's own)
//	env: [DB_HOST, APP_*]  # service variables beyond the base (absent: any but the loader's)
//	secrets: [/etc/steward/secrets/*]  # files {file: ...} and envFile may name (absent: none)
//	secretEnv: [WEBHOOK_TOKEN]  # worker variables {env: ...} and inheritEnv may name (absent: none)
//	urls: [https://hooks.example.com/]  # what http workers and notify may reach (absent: nothing)
//	dirs: [/srv/*]       # working directories a spec may name (absent: any)
//
// Every list but commands is an allow list whose default is written above.
// secrets, secretEnv and urls default to nothing: on a host with a policy,
// a spec reads no file and no variable of the worker's and reaches no URL
// that its operator did not list (a namespace writer could otherwise have
// the host send them out: a notify header, an http worker's header). env
// and dirs default to open (a service's own variables and directory are
// the service's business), and env never admits a loader variable
// (loaderVariables) it does not list by name.
//
// Commands govern every program a process spec makes this host run: the
// service's `command` (a bare name is looked up in the worker's PATH, as
// the start does; a relative path is taken from the service's `dir`), and
// the `exec` argv[0] of its ready and health probes and of its reload. A
// policy governs programs, not their arguments: allowing a shell or an
// interpreter allows anything.
//
// Both sides are canonical (every link followed, as the kernel follows
// them): at load, each entry's literal part (all of it, or the
// directories before its first wildcard) is resolved, so /bin/* stands
// for /usr/bin/* where /bin is a link, and a listed link for what it
// points to then; a program is judged by the file it resolves to when it
// is about to run, and that file is the one the driver runs (Program).
type Policy struct {
	Commands []string `yaml:"commands"`
	Users    []string `yaml:"users,omitempty"`
	Groups   []string `yaml:"groups,omitempty"`
	// EnvNames (env): the names (or globs of names) of service variables allowed
	// beyond the base (spec.BaseEnv, LC_*); nil: any name but a loader
	// variable.
	EnvNames []string `yaml:"env,omitempty"`
	// Secrets: the files (absolute paths or globs, canonical as commands
	// are) that secret references ({file: ...}) and envFile may name.
	Secrets []string `yaml:"secrets,omitempty"`
	// SecretEnv: the variables of the worker's environment that secret
	// references ({env: ...}) and inheritEnv may name.
	SecretEnv []string `yaml:"secretEnv,omitempty"`
	// URLs: the URL prefixes (scheme, host and port exactly; the path as a
	// prefix) that http workers and notifications may reach.
	URLs []string `yaml:"urls,omitempty"`
	// Dirs: the working directories (absolute paths or globs) a process
	// may name; nil: any.
	Dirs []string `yaml:"dirs,omitempty"`

	// commands are Commands with their links followed at load; secrets
	// and dirs the same of Secrets and Dirs; urls are URLs parsed.
	commands, secrets, dirs []command
	urls                    []*url.URL
	// file names the policy in refusals.
	file string
	// self and selfGroup are the worker's own user and primary group names.
	self, selfGroup string
}

// command is an entry of commands: as written, and as matched.
type command struct {
	written   string // as the policy file writes it (refusals quote it)
	canonical string // its literal part with its links followed at load
}

// LoadPolicy reads and checks a policy file: unknown fields, a command
// that is not absolute, a bad glob and a ".." after a wildcard are errors
// naming their entry. The commands' links are followed now (Policy).
func LoadPolicy(file string) (*Policy, error) {
	data, err := spec.ReadBounded(file, spec.MaxSpecFileBytes)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs // refusals name the file wherever they are read
	}
	p.file = file
	return p, nil
}

// ParsePolicy decodes a policy (LoadPolicy without the file).
func ParsePolicy(data []byte) (*Policy, error) {
	if len(data) > spec.MaxSpecFileBytes {
		return nil, fmt.Errorf("the policy is over %d bytes", spec.MaxSpecFileBytes)
	}
	if err := spec.CheckYAML(data); err != nil { // (nesting and aliases that parse into gigabytes)
		return nil, err
	}
	var p Policy
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict()); err != nil {
		return nil, errors.New(yaml.FormatError(err, false, false))
	}
	var problems []string
	p.commands = paths(&problems, "commands", p.Commands)
	p.secrets = paths(&problems, "secrets", p.Secrets)
	p.dirs = paths(&problems, "dirs", p.Dirs)
	for i, e := range p.EnvNames {
		if !validName(e) {
			problems = append(problems, fmt.Sprintf("env[%d]: %q is not a variable name or a glob of names", i, e))
		}
	}
	for i, e := range p.SecretEnv {
		if !validName(e) {
			problems = append(problems, fmt.Sprintf("secretEnv[%d]: %q is not a variable name or a glob of names", i, e))
		}
	}
	for i, raw := range p.URLs {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			problems = append(problems, fmt.Sprintf("urls[%d]: %q is not an http(s) URL prefix (scheme://host[:port][/path], no query or user)", i, raw))
			continue
		}
		p.urls = append(p.urls, u)
	}
	for i, u := range p.Users {
		if strings.TrimSpace(u) == "" {
			problems = append(problems, fmt.Sprintf("users[%d]: empty", i))
		}
	}
	for i, g := range p.Groups {
		if strings.TrimSpace(g) == "" {
			problems = append(problems, fmt.Sprintf("groups[%d]: empty", i))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	p.file = "(inline)"
	if u, err := user.Current(); err == nil {
		p.self = u.Username
		if g, err := user.LookupGroupId(u.Gid); err == nil {
			p.selfGroup = g.Name
		}
	}
	return &p, nil
}

// paths checks the entries of a list of absolute paths or globs (field
// names it in problems) and resolves their links (canonicalPattern).
func paths(problems *[]string, field string, entries []string) []command {
	var out []command
	for i, c := range entries {
		switch {
		case !filepath.IsAbs(c):
			*problems = append(*problems, fmt.Sprintf("%s[%d]: %q must be an absolute path or glob", field, i, c))
		case !validGlob(c):
			*problems = append(*problems, fmt.Sprintf("%s[%d]: %q is not a valid glob", field, i, c))
		case dotDotAfterWildcard(c):
			*problems = append(*problems, fmt.Sprintf("%s[%d]: %q has .. after a wildcard (a path with its links followed has none: it would match nothing)", field, i, c))
		default:
			out = append(out, command{written: c, canonical: canonicalPattern(c)})
		}
	}
	return out
}

// validName: a variable name, or a glob of names.
func validName(name string) bool {
	if name == "" || strings.ContainsAny(name, "=/\x00") {
		return false
	}
	_, err := filepath.Match(name, "")
	return err == nil
}

func validGlob(pattern string) bool {
	_, err := filepath.Match(pattern, "")
	return err == nil
}

// File is where the policy was read from.
func (p *Policy) File() string { return p.file }

// Check refuses a node whose process names a program, a user or a group
// the policy does not allow; nil for other kinds. n is the node as the
// driver receives it (templates rendered).
func (p *Policy) Check(n spec.Node) error {
	switch n.Kind {
	case spec.KindHTTP:
		return p.checkHTTP(n)
	case spec.KindProcess:
	default:
		return nil
	}
	proc, err := spec.ParseProcess(n.Process)
	if err != nil {
		return p.refuse("process block: %v", err)
	}
	if err := p.Dir(proc.Dir); err != nil {
		return err
	}
	for _, f := range proc.EnvFile {
		if err := p.Secret("process.envFile", spec.FileRef(f)); err != nil {
			return err
		}
	}
	for _, name := range proc.InheritEnv {
		if !baseVariable(name) && !matchName(p.SecretEnv, name) {
			return p.refuse("process.inheritEnv %s is not allowed (the policy's secretEnv does not list it)", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(proc.Env)) {
		if err := p.Secret("process.env."+name, proc.Env[name]); err != nil {
			return err
		}
	}
	if err := p.checkProgram("command", proc.Command, proc.Dir); err != nil {
		return err
	}
	for _, probe := range []struct {
		field string
		p     *spec.Probe
	}{{"process.ready.exec", proc.Ready}, {"process.health.exec", proc.Health}} {
		if probe.p != nil && len(probe.p.Exec) > 0 {
			// A probe runs in the worker's own directory, not the service's.
			if err := p.checkProgram("probe command ("+probe.field+")", probe.p.Exec[0], ""); err != nil {
				return err
			}
		}
	}
	if r := proc.Reload; r != nil && len(r.Exec) > 0 {
		// A reload command runs in the service's directory, as the service.
		if err := p.checkProgram("reload command (process.reload.exec)", r.Exec[0], proc.Dir); err != nil {
			return err
		}
	}
	// An envFile's variables are known only where the start reads it: the
	// process driver checks them there (Env).
	for _, name := range slices.Sorted(maps.Keys(proc.Env)) {
		if err := p.Env(name, ""); err != nil {
			return err
		}
	}
	if proc.User != "" && proc.User != p.self && !slices.Contains(p.Users, proc.User) {
		return p.refuse("user %s is not allowed", proc.User)
	}
	if proc.Group != "" && proc.Group != p.selfGroup && !slices.Contains(p.Groups, proc.Group) {
		return p.refuse("group %s is not allowed", proc.Group)
	}
	return nil
}

// checkProgram matches the program a start, a probe or a reload runs
// against the commands (Program).
func (p *Policy) checkProgram(what, program, dir string) error {
	_, err := p.Program(what, program, dir)
	return err
}

// Program is the file this host runs for program (a spec's command, or a
// probe's or a reload's argv[0], taken from dir when relative): its
// canonical path, every link followed as the kernel follows them (Resolve).
// With a policy, that path must match one of its commands (as they were
// resolved at load), and a program that cannot be resolved is refused; on
// a nil policy, Program is Resolve. The caller runs the path it returns,
// not program again: a link changed after the check does not change what
// runs.
func (p *Policy) Program(what, program, dir string) (string, error) {
	raw, err := locate(program, dir)
	path := ""
	if err == nil {
		path, err = canonicalFile(raw)
	}
	if err != nil {
		if p == nil {
			return "", err
		}
		if raw != "" {
			program = raw
		}
		return "", p.refuse("%s %s: %v", what, program, err)
	}
	if p == nil || p.allowed(path) {
		return path, nil
	}
	return "", p.refuse("%s %s is not allowed%s", what, resolvedName(raw, path), p.hint(raw))
}

// allowed: path (canonical) matches a command as resolved at load.
func (p *Policy) allowed(path string) bool { return matchAny(p.commands, path) }

// hint says, for a refused program whose path as written matches an entry
// that the load resolved to something else, what that entry stands for:
// its links as they were when the worker loaded the policy.
func (p *Policy) hint(raw string) string {
	clean := filepath.Clean(raw)
	for _, c := range p.commands {
		if c.canonical == filepath.Clean(c.written) {
			continue
		}
		if ok, _ := filepath.Match(filepath.Clean(c.written), clean); ok {
			return fmt.Sprintf(" (the policy's %s stands for %s: its links as they were when the worker loaded the policy)", c.written, c.canonical)
		}
	}
	return ""
}

// Resolved lists the commands whose links the load followed, as
// "written -> matched" (the worker logs them at start).
func (p *Policy) Resolved() []string {
	var out []string
	for _, c := range p.commands {
		if c.canonical != filepath.Clean(c.written) {
			out = append(out, c.written+" -> "+c.canonical)
		}
	}
	return out
}

// Env refuses a variable of a service's environment that the policy's env
// does not allow: with env, a name neither of the base nor listed; always,
// a variable that makes an allowed program load other code (loaderVariable)
// unless env lists it by name. from names where it comes from ("envFile
// /etc/x", or "" for the spec's env). Nil on a nil policy.
func (p *Policy) Env(name, from string) error {
	if p == nil {
		return nil
	}
	where := ""
	if from != "" {
		where = " (from " + from + ")"
	}
	if slices.Contains(p.EnvNames, name) {
		return nil
	}
	if loaderVariable(name) {
		return p.refuse("env %s%s is not allowed (it makes an allowed program load other code): list %s by name in the policy's env to allow it", name, where, name)
	}
	if p.EnvNames != nil && !baseVariable(name) && !matchName(p.EnvNames, name) {
		return p.refuse("env %s%s is not allowed (the policy's env does not list it)", name, where)
	}
	return nil
}

// baseVariable: a variable every service gets (spec.BaseEnv, LC_*).
func baseVariable(name string) bool {
	return slices.Contains(spec.BaseEnv, name) || strings.HasPrefix(name, "LC_")
}

// matchName: name matches one of the names or globs of names.
func matchName(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// Secret refuses a secret reference the policy does not allow (what names
// the field): a file its secrets do not list (judged by the file it
// resolves to, every link followed), a variable its secretEnv does not
// list. A literal is allowed. Nil on a nil policy. The refusal quotes the
// reference, never what it holds.
func (p *Policy) Secret(what string, v spec.Value) error {
	if p == nil || !v.IsRef() {
		return nil
	}
	if v.File == "" {
		if matchName(p.SecretEnv, v.Env) {
			return nil
		}
		return p.refuse("%s {env: %s} is not allowed (the policy's secretEnv does not list it)", what, v.Env)
	}
	if !filepath.IsAbs(v.File) {
		return p.refuse("%s {file: %s} is not allowed (not an absolute path)", what, v.File)
	}
	_, err := p.secretFile(v.File)
	if err != nil {
		return p.refuse("%s %v", what, err)
	}
	return nil
}

// secretFile is file's canonical path, if the policy's secrets list it;
// else an error that says why not (one that cannot be resolved is
// refused: its path judged as text is not the file the kernel opens, as
// with a link whose target makes the path too long to resolve).
func (p *Policy) secretFile(file string) (string, error) {
	path, err := canonicalFile(file)
	if err != nil {
		return "", fmt.Errorf("file %s: %v", file, err)
	}
	if !matchAny(p.secrets, path) {
		return "", fmt.Errorf("file %s is not allowed (the policy's secrets do not list it)", resolvedName(file, path))
	}
	return path, nil
}

// ReadFile reads a secret file for a driver (a {file: PATH} reference or
// an envFile): on a nil policy as os.ReadFile does; under a policy, only a
// file its secrets list, judged by its canonical path, which is then what
// is read, following no link. So a link swapped between the check at
// admission and the read (or between this check and the open) fails the
// read; it never reads a file the policy does not list.
func (p *Policy) ReadFile(file string) ([]byte, error) {
	if p == nil {
		return os.ReadFile(file)
	}
	var f *os.File
	for attempt := 1; ; attempt++ {
		path, err := p.secretFile(file)
		if err != nil {
			return nil, p.refuse("%v", err)
		}
		f, err = openResolved(path)
		if err == nil {
			break
		}
		// A link swapped between the check and the open: a rotation that
		// replaces a link atomically (a Kubernetes secret volume) lands
		// here too, and is checked again, twice at most.
		if (errors.Is(err, errChanged) || errors.Is(err, fs.ErrNotExist)) && attempt < 3 {
			continue
		}
		if errors.Is(err, errChanged) {
			return nil, p.refuse("file %s: its links changed after it was checked", file)
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err == nil && len(b) > maxSecretFile {
		return nil, p.refuse("file %s holds more than a secret file may (%d bytes)", file, maxSecretFile)
	}
	return b, err
}

// maxSecretFile bounds what a secret file read under a policy holds (a
// listed glob could name a device or an endless file).
const maxSecretFile = 1 << 20

// errChanged: a path resolved and checked had a link in it when opened.
var errChanged = errors.New("its links changed after the check")

// Dir refuses a working directory the policy's dirs do not list (judged by
// its canonical path); "" (the worker's) and any directory without dirs are
// allowed.
func (p *Policy) Dir(dir string) error {
	if p == nil || p.Dirs == nil || dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return p.refuse("process.dir %s is not allowed (not an absolute path)", dir)
	}
	path, err := canonicalFile(dir)
	if err != nil { // judged as text, it would not be the directory the kernel enters
		return p.refuse("process.dir %s: %v", dir, err)
	}
	if matchAny(p.dirs, path) {
		return nil
	}
	return p.refuse("process.dir %s is not allowed (the policy's dirs do not list it)", resolvedName(dir, path))
}

// resolvedName is how a refusal shows a path as written and the
// canonical path it was judged by, when they differ.
func resolvedName(raw, path string) string {
	if path == raw {
		return raw
	}
	return fmt.Sprintf("%s (resolved to %s)", raw, path)
}

func matchAny(entries []command, path string) bool {
	for _, c := range entries {
		if ok, _ := filepath.Match(c.canonical, path); ok {
			return true
		}
	}
	return false
}

// URL refuses a URL (what names the field; name is how a refusal shows it,
// never a secret's value) that no entry of the policy's urls is a prefix
// of: same scheme, same host and port, and the entry's path a prefix of the
// URL's at a "/" boundary. Nil on a nil policy.
func (p *Policy) URL(what, name, raw string) error {
	if p == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return p.refuse("%s %s is not allowed (not an absolute URL)", what, name)
	}
	for _, e := range p.urls {
		if urlUnder(u, e) {
			return nil
		}
	}
	return p.refuse("%s %s is not allowed (the policy's urls do not list it)", what, name)
}

// maxRedirects is how many redirects a request follows (net/http's own
// limit, which a CheckRedirect of one's own replaces).
const maxRedirects = 10

// Redirect is an http.Client's CheckRedirect for a host with policy p:
// each hop must be a URL the policy lists, as the first was (Policy.URL).
// A request that followed a redirect unchecked reached any host, with
// every header but Authorization and Cookie (a secret one among them). A
// nil policy follows as net/http does.
func (p *Policy) Redirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if p == nil {
		return nil
	}
	// Named by its target's scheme and host only: the URL redirected from
	// may be a secret (a webhook by reference), and a query may hold one.
	return p.URL("a redirect", "to "+req.URL.Scheme+"://"+req.URL.Host, req.URL.String())
}

// urlUnder: u is at or below prefix e.
func urlUnder(u, e *url.URL) bool {
	if !strings.EqualFold(u.Scheme, e.Scheme) || !strings.EqualFold(hostPort(u), hostPort(e)) {
		return false
	}
	if u.User != nil { // credentials in a URL are not the listed one's
		return false
	}
	path, prefix := u.EscapedPath(), e.EscapedPath()
	if path == "" {
		path = "/"
	}
	if prefix == "" || prefix == "/" {
		return true
	}
	if strings.Contains(path, "/../") || strings.HasSuffix(path, "/..") || strings.Contains(path, "%2e") || strings.Contains(path, "%2E") {
		return false // a dot segment climbs out of the prefix at the receiver
	}
	if lower := strings.ToLower(path); strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") ||
		strings.Contains(lower, "%25") || strings.ContainsAny(path, `;\`) {
		// An encoded slash or backslash, a double encoding, or a
		// parameter (Tomcat's "..;/"): a receiver that decodes or splits
		// them can climb out of the prefix ("/steward/..%2fadmin").
		return false
	}
	return path == prefix || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/")
}

// hostPort is u's host with its scheme's default port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Hostname() + ":443"
	}
	return u.Hostname() + ":80"
}

// checkHTTP refuses an http worker whose requests go to a URL the policy's
// urls do not list or carry a secret it does not allow.
func (p *Policy) checkHTTP(n spec.Node) error {
	h, err := spec.ParseHTTP(n.HTTP)
	if err != nil {
		return p.refuse("http block: %v", err)
	}
	type request struct {
		field, url string
		headers    map[string]spec.Value
	}
	var reqs []request
	if h.Health != nil {
		reqs = append(reqs, request{"http.health.url", h.Health.URL, h.Health.Headers})
	}
	if h.Start != nil {
		reqs = append(reqs, request{"http.start.url", h.Start.URL, h.Start.Headers})
	}
	if h.Stop != nil {
		reqs = append(reqs, request{"http.stop.url", h.Stop.URL, h.Stop.Headers})
	}
	if h.Reload != nil {
		reqs = append(reqs, request{"http.reload.url", h.Reload.URL, h.Reload.Headers})
	}
	for _, r := range reqs {
		if err := p.URL(r.field, redactedURL(r.url), r.url); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(r.headers)) {
			if strings.EqualFold(k, "Host") {
				// The driver sends it as the request's host: past a listed
				// address (a proxy, a load balancer, a shared IP), another
				// virtual host would get the request and its secrets.
				return p.refuse("%s.headers.%s is not allowed (the request's host is its URL's, which the policy's urls judge)", strings.TrimSuffix(r.field, ".url"), k)
			}
			if err := p.Secret(strings.TrimSuffix(r.field, ".url")+".headers."+k, r.headers[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckNotify refuses a notification whose webhook or headers the policy
// does not allow (URL, Secret); a webhook that is a reference is checked
// as a secret first, then the URL it resolves to (resolve reads it).
func (p *Policy) CheckNotify(webhook spec.Value, headers map[string]spec.Value, resolve func(spec.Value) (string, error)) error {
	if p == nil {
		return nil
	}
	if err := p.Secret("notify.webhook", webhook); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		if err := p.Secret("notify.headers."+k, headers[k]); err != nil {
			return err
		}
	}
	raw, name := webhook.Literal, redactedURL(webhook.Literal)
	if webhook.IsRef() {
		v, err := resolve(webhook)
		if err != nil {
			return err
		}
		raw, name = v, "(the webhook its reference names)"
	}
	return p.URL("notify.webhook", name, raw)
}

// redactedURL is raw with a password masked (refusals quote it).
func redactedURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(not a URL)"
}

// loaderVariables are the environment variables that make a program load
// or run code of another's choosing: the dynamic loader's (LD_*, and
// macOS's DYLD_*, by prefix), the shells' (startup files; options and a
// trace prompt that run commands; exported functions, BASH_FUNC_*), and
// the code search paths, startup options and hooks that interpreters and
// runtimes read at start (Python, Perl, Ruby, Node.js, the JVM, PHP, Lua,
// Erlang, .NET), glibc's iconv modules and OpenSSL's configuration (which
// loads engines and providers), and where programs look for their own
// code and configuration: HOME (Python's user site-packages and
// usercustomize under ~/.local, shells' and tools' dotfiles), the XDG
// directories, and PATH (an allowed script's "#!/usr/bin/env python3"
// runs the python PATH finds first; the worker looks a spec's command up
// in its own PATH, never the spec's). A service still gets the worker's
// PATH and its user's HOME: only a spec (or envFile) that sets one needs
// the policy's env to list it by name. Not here: IFS (shells reset
// it at start), PYTHONINSPECT (an interactive prompt after the program,
// on a service's empty stdin), and the package paths of package managers
// (CLASSPATH, GEM_PATH, GEM_HOME): an allow-list of variables is the
// complete answer.
var loaderVariables = map[string]bool{
	// shells
	"BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "PS4": true,
	// Python
	"PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true, "PYTHONUSERBASE": true, "PYTHONPYCACHEPREFIX": true,
	// where programs find their own code and configuration
	"HOME": true, "PATH": true, "XDG_CONFIG_HOME": true, "XDG_CONFIG_DIRS": true, "XDG_DATA_HOME": true, "XDG_DATA_DIRS": true,
	// Perl
	"PERL5LIB": true, "PERLLIB": true, "PERL5OPT": true,
	// Ruby
	"RUBYOPT": true, "RUBYLIB": true,
	// Node.js
	"NODE_OPTIONS": true, "NODE_PATH": true,
	// the JVM
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true,
	// PHP
	"PHPRC": true, "PHP_INI_SCAN_DIR": true,
	// Erlang
	"ERL_FLAGS": true, "ERL_AFLAGS": true, "ERL_ZFLAGS": true, "ERL_LIBS": true,
	// .NET
	"DOTNET_STARTUP_HOOKS": true,
	// glibc's iconv modules, OpenSSL's configuration, engines and providers
	"GCONV_PATH": true, "OPENSSL_CONF": true, "OPENSSL_ENGINES": true, "OPENSSL_MODULES": true,
}

// loaderPrefixes: the same, by prefix (Lua's take a version suffix:
// LUA_INIT_5_4).
var loaderPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "CORECLR_PROFILER"}

// loaderVariable: an environment variable that makes a program load or
// run code of another's choosing (loaderVariables).
func loaderVariable(name string) bool {
	if loaderVariables[name] {
		return true
	}
	for _, prefix := range loaderPrefixes {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

func (p *Policy) refuse(format string, args ...any) error {
	return &Refusal{Rule: "policy " + p.file, Msg: fmt.Sprintf(format, args...)}
}

// Resolve is the file a start runs for program: its absolute path as the
// host looks it up (a bare name in this process's PATH, as os/exec does; a
// relative path from dir, or this process's working directory), with every
// link followed as the kernel follows them: a ".." after a link is the
// parent of the link's target, not of the link (filepath.EvalSymlinks
// resolves components in order, as the kernel does). A program that does
// not exist cannot be resolved.
func Resolve(program, dir string) (string, error) {
	raw, err := locate(program, dir)
	if err != nil {
		return "", err
	}
	return canonicalFile(raw)
}

// locate is the absolute path the host looks program up at, as written:
// never cleaned (a ".." after a link is not the link's parent).
func locate(program, dir string) (string, error) {
	switch {
	case program == "":
		return "", errors.New("empty")
	case filepath.IsAbs(program):
		return program, nil
	case !strings.Contains(program, "/"):
		found, err := exec.LookPath(program)
		if err != nil {
			return "", errors.New("not found in this host's PATH")
		}
		return absolute(found, "")
	}
	return absolute(program, dir)
}

// absolute is path taken from dir (or the working directory), joined
// without cleaning.
func absolute(path, dir string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	if dir == "" || !filepath.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		if dir != "" {
			wd = strings.TrimSuffix(wd, "/") + "/" + dir
		}
		dir = wd
	}
	return strings.TrimSuffix(dir, "/") + "/" + path, nil
}

// canonicalFile is raw with every link followed; an error says why it cannot
// be resolved (a missing file, a loop of links), not naming raw again.
func canonicalFile(raw string) (string, error) {
	path, err := filepath.EvalSymlinks(raw)
	if err == nil {
		return path, nil
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("no such file on this host")
	case errors.As(err, &pe):
		return "", fmt.Errorf("cannot be resolved on this host: %s: %v", pe.Path, pe.Err)
	}
	return "", fmt.Errorf("cannot be resolved on this host: %v", err)
}

// canonicalPattern is a commands entry with its literal part resolved:
// the whole path, or the directories before its first wildcard (what
// follows is kept as written: a wildcard directory that is a link does not
// match what it points to). A part that does not exist (yet) keeps its
// name after its nearest existing parent's canonical path.
func canonicalPattern(entry string) string {
	parts := strings.Split(entry, "/")
	for i, part := range parts {
		if !hasMeta(part) {
			continue
		}
		prefix := strings.Join(parts[:i], "/")
		if prefix == "" {
			prefix = "/"
		}
		rest := make([]string, 0, len(parts)-i)
		for _, r := range parts[i:] {
			if r != "" && r != "." {
				rest = append(rest, r)
			}
		}
		return strings.TrimSuffix(canonicalPath(prefix), "/") + "/" + strings.Join(rest, "/")
	}
	return canonicalPath(entry)
}

// canonicalPath is path with its links followed, as far as it exists.
func canonicalPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	i := strings.LastIndex(path, "/")
	if i <= 0 {
		return filepath.Clean(path)
	}
	// The parent resolved (its links followed: a ".." in name is then
	// the kernel's), and the name that is not there.
	return filepath.Join(canonicalPath(path[:i]), path[i+1:])
}

func hasMeta(part string) bool { return strings.ContainsAny(part, `*?[\`) }

// dotDotAfterWildcard: entry has a ".." component after a wildcard.
func dotDotAfterWildcard(entry string) bool {
	wild := false
	for _, part := range strings.Split(entry, "/") {
		if hasMeta(part) {
			wild = true
		} else if wild && part == ".." {
			return true
		}
	}
	return false
}
