package process

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/driver"
	"github.com/steward-sh/steward/internal/spec"
)

// launch is how a service is executed: its environment, its identity and,
// with limits, the prlimit(1) exec that sets them first.
type launch struct {
	env        []string
	credential *syscall.Credential
	// path and args replace the command's when limits are set.
	path string
	args []string
}

// account is the user a service runs as.
type account struct {
	uid, gid uint32
	groups   []uint32
	name     string
	home     string
}

// prepare resolves what a start needs on this host: the identity, the
// environment (secrets read now, never kept), the limits. Every error is
// Permanent and names the field, never a secret's value.
// Under a policy, a variable that makes a program load other code is
// refused (admission.Policy.Env).
func prepare(c Config, cmd *exec.Cmd, pol *admission.Policy) (launch, error) {
	var l launch
	acct, err := lookupAccount(c.User, c.Group)
	if err != nil {
		return l, err
	}
	if acct != nil {
		l.credential = &syscall.Credential{Uid: acct.uid, Gid: acct.gid, Groups: acct.groups}
	}
	if l.env, err = environment(c, acct, pol); err != nil {
		return l, err
	}
	if c.Limits != nil {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			return l, driver.Permanent(errors.New("process.limits: the prlimit command (util-linux) is not on this host's PATH"))
		}
		l.path = prlimit
		l.args = append([]string{"prlimit"}, limitArgs(c.Limits)...)
		l.args = append(append(l.args, "--", cmd.Path), cmd.Args[1:]...)
	}
	return l, nil
}

// limitArgs are prlimit(1)'s options for limits (soft and hard alike).
func limitArgs(lim *spec.Limits) []string {
	var out []string
	for _, f := range []struct {
		opt string
		v   *uint64
	}{{"--nofile", lim.Nofile}, {"--nproc", lim.Nproc}, {"--core", lim.Core}} {
		if f.v != nil {
			out = append(out, fmt.Sprintf("%s=%d", f.opt, *f.v))
		}
	}
	return out
}

// lookupAccount finds user (and group) on this host; nil without a user.
// Only a root worker changes identity; for another worker, naming its own
// user (and group) is allowed and changes nothing.
func lookupAccount(name, group string) (*account, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.LookupId(name); err != nil {
			return nil, driver.Permanent(fmt.Errorf("process.user: no user %q on this host", name))
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	a := &account{uid: uint32(uid), gid: uint32(gid), name: u.Username, home: u.HomeDir}
	if group != "" {
		g, err := user.LookupGroup(group)
		if err != nil {
			if g, err = user.LookupGroupId(group); err != nil {
				return nil, driver.Permanent(fmt.Errorf("process.group: no group %q on this host", group))
			}
		}
		id, _ := strconv.ParseUint(g.Gid, 10, 32)
		a.gid = uint32(id)
		a.groups = []uint32{a.gid}
	} else if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if id, err := strconv.ParseUint(s, 10, 32); err == nil {
				a.groups = append(a.groups, uint32(id))
			}
		}
	}
	if os.Geteuid() != 0 {
		if uint32(os.Geteuid()) == a.uid && uint32(os.Getegid()) == a.gid {
			return nil, nil // already so
		}
		return nil, driver.Permanent(fmt.Errorf("process.user: running as %q needs a worker running as root (this one runs as uid %d)", name, os.Geteuid()))
	}
	return a, nil
}

// environment is a service's whole environment, in a stable order: the
// base variables of the worker's environment (spec.BaseEnv and LC_*), the
// ones InheritEnv names, then each envFile, then Env (later wins). With a
// user, HOME, USER and LOGNAME are that user's. Nothing else of the
// worker's environment (its Temporal credentials, say) reaches a service.
// Under a policy, the names of each envFile and of Env are checked here,
// where the environment is assembled: an envFile's are known only when it
// is read.
func environment(c Config, acct *account, pol *admission.Policy) ([]string, error) {
	vars := map[string]string{}
	keep := map[string]bool{}
	for _, k := range spec.BaseEnv {
		keep[k] = true
	}
	for _, k := range c.InheritEnv {
		keep[k] = true
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if keep[k] || strings.HasPrefix(k, "LC_") {
			vars[k] = v
		}
	}
	if acct != nil {
		vars["HOME"], vars["USER"], vars["LOGNAME"] = acct.home, acct.name, acct.name
	}
	for _, f := range c.EnvFile {
		kvs, err := driver.ReadEnvFile(f, pol.ReadFile)
		if err != nil {
			return nil, fmt.Errorf("process.%w", err)
		}
		for _, kv := range kvs {
			if err := pol.Env(kv[0], "envFile "+f); err != nil {
				return nil, driver.Permanent(err)
			}
			vars[kv[0]] = kv[1]
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if err := pol.Env(k, ""); err != nil {
			return nil, driver.Permanent(err)
		}
	}
	env, err := driver.ResolveAll("process.env", c.Env, pol.ReadFile)
	if err != nil {
		return nil, err
	}
	for k, v := range env {
		vars[k] = v
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + vars[k]
	}
	return out, nil
}
