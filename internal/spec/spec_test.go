package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const plantYAML = `
name: plant
strategy: one_for_one
intensity:
  maxRestarts: 5
  period: 30s
  cooldown: 2m
vars:
  port: "8080"
children:
  - name: line-1
    kind: stub
    desired: stopped
    restart: transient
    vars:
      port: "9090"
    timeouts:
      start: 1.5s
      stop: 2s
      restart: 3s
      observe: 500ms
    retry:
      maxAttempts: 4
      initialInterval: 250ms
      backoffCoefficient: 1.5
      maxInterval: 5s
    backoff:
      initial: 10ms
      max: 30s
      multiplier: 3
      jitter: 0
      resetAfter: 2m
    observe:
      interval: 45s
    stub:
      delay: 100ms
      failureRate: 0.25
      seed: 42
      crashAfter: 1m30s
      exitAfter: 1h
      outcomes:
        start: [failure, success]
        stop: [permanent]
  - name: line-2
    children:
      - name: press
        kind: stub
      - name: oven.2_b
        kind: stub
        restart: temporary
`

func TestParseValidMultiChildSpec(t *testing.T) {
	n, err := Parse([]byte(plantYAML))
	require.NoError(t, err)

	require.Equal(t, "plant", n.Name)
	require.True(t, n.IsSupervisor())
	require.Equal(t, OneForOne, n.Strategy)
	require.Equal(t, &Intensity{MaxRestarts: 5, Period: Dur(30 * time.Second), Cooldown: Dur(2 * time.Minute)}, n.Intensity)
	require.Equal(t, map[string]string{"port": "8080"}, n.Vars)
	require.Empty(t, n.Kind)
	require.Len(t, n.Children, 2)

	w := n.Children[0]
	require.Equal(t, "line-1", w.Name)
	require.False(t, w.IsSupervisor())
	require.Equal(t, KindStub, w.Kind)
	require.Equal(t, DesiredStopped, w.Desired)
	require.Equal(t, RestartTransient, w.Restart)
	require.Equal(t, map[string]string{"port": "9090"}, w.Vars)
	require.Equal(t, 1500*time.Millisecond, w.Timeouts.Start.D())
	require.Equal(t, 2*time.Second, w.Timeouts.Stop.D())
	require.Equal(t, 3*time.Second, w.Timeouts.Restart.D())
	require.Equal(t, 500*time.Millisecond, w.Timeouts.Observe.D())
	require.Equal(t, &Retry{MaxAttempts: 4, InitialInterval: Dur(250 * time.Millisecond), BackoffCoefficient: 1.5, MaxInterval: Dur(5 * time.Second)}, w.Retry)
	zero := 0.0
	require.Equal(t, &Backoff{Initial: Dur(10 * time.Millisecond), Max: Dur(30 * time.Second), Multiplier: 3, Jitter: &zero, ResetAfter: Dur(2 * time.Minute)}, w.Backoff)
	require.Equal(t, 45*time.Second, w.Observe.Interval.D())
	require.Equal(t, &Stub{
		Delay: Duration(100 * time.Millisecond), FailureRate: 0.25, Seed: 42,
		CrashAfter: Duration(90 * time.Second), ExitAfter: Duration(time.Hour),
		Outcomes: map[string][]string{"start": {OutcomeFailure, OutcomeSuccess}, "stop": {OutcomePermanent}},
	}, w.Stub)
	require.Nil(t, w.Process)
	require.Nil(t, w.HTTP)

	s := n.Children[1]
	require.Equal(t, "line-2", s.Name)
	require.True(t, s.IsSupervisor())
	require.Empty(t, s.Strategy, "Parse keeps the spec as written; Resolved fills defaults")
	require.Len(t, s.Children, 2)
	require.Equal(t, "press", s.Children[0].Name)
	require.Equal(t, KindStub, s.Children[0].Kind)
	require.Nil(t, s.Children[0].Stub)
	require.Equal(t, "oven.2_b", s.Children[1].Name)
	require.Equal(t, RestartTemporary, s.Children[1].Restart)
}

func TestLoadReadsAndParsesAFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plant.yaml")
	require.NoError(t, os.WriteFile(path, []byte(plantYAML), 0o600))
	n, err := Load(path)
	require.NoError(t, err)
	require.Equal(t, "plant", n.Name)
	require.Len(t, n.Children, 2)

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	var ps Problems
	require.True(t, errors.As(err, &ps))
	require.Contains(t, err.Error(), "cannot read spec")
	require.Contains(t, err.Error(), "missing.yaml")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: a\nkind: stub\ntimeouts: {start: 0s}\n"), 0o600))
	_, err = Load(bad)
	require.EqualError(t, err, "timeouts.start: must be > 0")
}

func TestResolvedFillsEveryDefault(t *testing.T) {
	r := Node{Name: "w", Kind: KindStub}.Resolved()

	require.Equal(t, DesiredRunning, r.Desired)
	require.Equal(t, RestartPermanent, r.Restart)

	require.Equal(t, 30*time.Second, r.Timeouts.Start.D())
	require.Equal(t, 10*time.Second, r.Timeouts.Stop.D())
	require.Equal(t, 45*time.Second, r.Timeouts.Restart.D())
	require.Equal(t, 10*time.Second, r.Timeouts.Observe.D())

	require.Equal(t, 3, r.Retry.MaxAttempts)
	require.Equal(t, time.Second, r.Retry.InitialInterval.D())
	require.Equal(t, 2.0, r.Retry.BackoffCoefficient)
	require.Equal(t, 10*time.Second, r.Retry.MaxInterval.D())

	require.Equal(t, time.Second, r.Backoff.Initial.D())
	require.Equal(t, time.Minute, r.Backoff.Max.D())
	require.Equal(t, 2.0, r.Backoff.Multiplier)
	require.NotNil(t, r.Backoff.Jitter)
	require.Equal(t, 0.1, *r.Backoff.Jitter)
	require.Equal(t, time.Minute, r.Backoff.ResetAfter.D())

	require.Equal(t, time.Minute, r.Observe.Interval.D())

	require.Equal(t, &Stub{}, r.Stub, "a stub worker gets an empty stub block")
	require.Empty(t, r.Strategy, "a worker has no strategy")

	// The values above are the documented defaults of defaults.go.
	require.Equal(t, DefaultStartTimeout, r.Timeouts.Start.D())
	require.Equal(t, DefaultStopTimeout, r.Timeouts.Stop.D())
	require.Equal(t, DefaultRestartTimeout, r.Timeouts.Restart.D())
	require.Equal(t, DefaultObserveTimeout, r.Timeouts.Observe.D())
	require.Equal(t, DefaultRetryMaxAttempts, r.Retry.MaxAttempts)
	require.Equal(t, DefaultRetryInitialInterval, r.Retry.InitialInterval.D())
	require.Equal(t, DefaultRetryBackoffCoefficient, r.Retry.BackoffCoefficient)
	require.Equal(t, DefaultRetryMaxInterval, r.Retry.MaxInterval.D())
	require.Equal(t, DefaultBackoffInitial, r.Backoff.Initial.D())
	require.Equal(t, DefaultBackoffMax, r.Backoff.Max.D())
	require.Equal(t, DefaultBackoffMultiplier, r.Backoff.Multiplier)
	require.Equal(t, DefaultBackoffJitter, *r.Backoff.Jitter)
	require.Equal(t, DefaultBackoffResetAfter, r.Backoff.ResetAfter.D())
	require.Equal(t, DefaultObserveInterval, r.Observe.Interval.D())
	require.Equal(t, OneForOne, DefaultStrategy)
}

func TestResolvedKeepsExplicitValuesAndDoesNotTouchItsInput(t *testing.T) {
	zero := 0.0
	stub := &Stub{Seed: 7}
	n := Node{
		Name: "w", Kind: KindStub, Desired: DesiredStopped, Restart: RestartTemporary,
		Timeouts: &Timeouts{Start: Dur(time.Second)},
		Retry:    &Retry{MaxAttempts: 1, BackoffCoefficient: 1.5},
		Backoff:  &Backoff{Initial: Dur(0), Multiplier: 4, Jitter: &zero},
		Observe:  &Observe{Interval: Dur(5 * time.Second)},
		Stub:     stub,
	}
	r := n.Resolved()

	require.Equal(t, DesiredStopped, r.Desired)
	require.Equal(t, RestartTemporary, r.Restart)
	require.Equal(t, time.Second, r.Timeouts.Start.D())
	require.Equal(t, DefaultStopTimeout, r.Timeouts.Stop.D(), "unset siblings still get defaults")
	require.Equal(t, 1, r.Retry.MaxAttempts)
	require.Equal(t, 1.5, r.Retry.BackoffCoefficient)
	require.Equal(t, DefaultRetryMaxInterval, r.Retry.MaxInterval.D())
	require.Equal(t, time.Duration(0), r.Backoff.Initial.D(), "an explicit 0s initial is kept")
	require.Equal(t, 4.0, r.Backoff.Multiplier)
	require.Equal(t, 0.0, *r.Backoff.Jitter, "an explicit jitter of 0 is kept")
	require.Equal(t, DefaultBackoffMax, r.Backoff.Max.D())
	require.Equal(t, 5*time.Second, r.Observe.Interval.D())
	require.Same(t, stub, r.Stub)

	// The input is unchanged: Resolved copies before filling.
	require.Nil(t, n.Timeouts.Stop)
	require.Nil(t, n.Timeouts.Restart)
	require.Nil(t, n.Timeouts.Observe)
	require.Nil(t, n.Retry.InitialInterval)
	require.Nil(t, n.Retry.MaxInterval)
	require.Nil(t, n.Backoff.Max)
	require.Nil(t, n.Backoff.ResetAfter)
	require.NotSame(t, n.Timeouts, r.Timeouts)

	// Kinds other than stub get no stub block.
	require.Nil(t, Node{Name: "h", Kind: KindHTTP}.Resolved().Stub)
}

func TestResolvedSupervisorGetsTheDefaultStrategy(t *testing.T) {
	sup := Node{Name: "s", Children: []Node{{Name: "w", Kind: KindStub}}}
	require.Equal(t, OneForOne, sup.Resolved().Strategy)
	require.Empty(t, sup.Strategy, "input untouched")
	sup.Strategy = RestForOne
	require.Equal(t, RestForOne, sup.Resolved().Strategy, "an explicit strategy is kept")
}

// problems parses a spec and returns its problems, one string per line of
// the error, checking that the error is Problems and that Error() is one
// line per problem.
func problems(t *testing.T, yml string) []string {
	t.Helper()
	n, err := Parse([]byte(yml))
	if err == nil {
		return nil
	}
	require.Equal(t, Node{}, n, "a spec with problems yields no node")
	var ps Problems
	require.True(t, errors.As(err, &ps), "the error is Problems: %T", err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, len(ps), "one line per problem")
	for i, p := range ps {
		require.Equal(t, p.String(), lines[i])
	}
	return lines
}

const nameRule = `is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit; no '/')`

func TestValidationProblemsAreNamedByPath(t *testing.T) {
	cases := []struct {
		name string
		yml  string
		want []string
	}{
		{"zero start timeout", `
name: plant
children:
  - name: a
    kind: stub
  - name: b
    kind: stub
    timeouts: {start: 0s}
`, []string{"children[1].timeouts.start: must be > 0"}},
		{"negative timeouts", `
name: a
kind: stub
timeouts: {stop: -1s, restart: 0s, observe: -2s}
`, []string{"timeouts.stop: must be > 0", "timeouts.restart: must be > 0", "timeouts.observe: must be > 0"}},
		{"grandchild path", `
name: plant
children:
  - name: a
    kind: stub
  - name: line
    children:
      - name: press
        kind: stub
        timeouts: {start: 0s}
`, []string{"children[1].children[0].timeouts.start: must be > 0"}},
		{"root without name", "kind: stub\n", []string{"name: required"}},
		{"child without name", `
name: plant
children:
  - kind: stub
`, []string{"children[0].name: required"}},
		{"several unnamed children are not duplicates", `
name: plant
children:
  - kind: stub
  - kind: stub
`, []string{"children[0].name: required", "children[1].name: required"}},
		{"name with a slash", `
name: plant
children:
  - name: line/1
    kind: stub
`, []string{`children[0].name: "line/1" ` + nameRule}},
		{"name starting with a dot", "name: .hidden\nkind: stub\n", []string{`name: ".hidden" ` + nameRule}},
		{"name with a space", "name: my service\nkind: stub\n", []string{`name: "my service" ` + nameRule}},
		{"duplicate sibling names", `
name: plant
children:
  - name: a
    kind: stub
  - name: b
    kind: stub
  - name: a
    kind: stub
`, []string{`children[2].name: duplicate name "a" (also children[0])`}},
		{"same name in different subtrees is fine", `
name: plant
children:
  - name: a
    children:
      - name: x
        kind: stub
  - name: b
    children:
      - name: x
        kind: stub
`, nil},
		{"unknown kind", `
name: plant
children:
  - name: a
    kind: docker
`, []string{`children[0].kind: unknown kind "docker" (stub, process or http)`}},
		{"kind and children", `
name: plant
kind: stub
children:
  - name: a
    kind: stub
`, []string{"kind: a node has either children (a supervisor) or a kind (a worker), not both"}},
		{"neither kind nor children", "name: a\n", []string{"kind: required for a worker (stub, process or http), or give the node children"}},
		{"unknown strategy", `
name: plant
strategy: one_for_none
children: [{name: a, kind: stub}]
`, []string{`strategy: unknown strategy "one_for_none" (one_for_one, one_for_all or rest_for_one)`}},
		{"one_for_all", `
name: plant
strategy: one_for_all
children: [{name: a, kind: stub}]
`, nil},
		{"rest_for_one", `
name: plant
strategy: rest_for_one
children: [{name: a, kind: stub}]
`, nil},
		{"negative intensity", `
name: plant
intensity: {maxRestarts: -1, period: 10s}
children: [{name: a, kind: stub}]
`, []string{"intensity.maxRestarts: must be > 0"}},
		{"zero intensity", `
name: plant
intensity: {maxRestarts: 0, period: 10s}
children: [{name: a, kind: stub}]
`, []string{"intensity.maxRestarts: must be > 0"}},
		{"empty child name", `
name: plant
children: [{name: "", kind: stub}]
`, []string{"children[0].name: required"}},
		{"child name with a slash", `
name: plant
children: [{name: "line/1", kind: stub}]
`, []string{`children[0].name: "line/1" is not a valid name (letters, digits, '.', '_' and '-', starting with a letter or digit; no '/')`}},
		{"duplicate nested sibling", `
name: plant
children:
  - name: line
    children: [{name: press, kind: stub}, {name: press, kind: stub}]
`, []string{`children[0].children[1].name: duplicate name "press" (also children[0])`}},
		{"supervisor backoff", `
name: plant
backoff: {initial: 0s}
children: [{name: a, kind: stub}]
`, []string{"backoff.initial: must be > 0"}},
		{"template over inherited and overridden vars", `
name: plant
vars: {port: "80", host: example.com}
children:
  - name: line
    vars: {port: "8080"}
    children:
      - name: web
        kind: http
        http: {health: {url: "http://{{ .Vars.host }}:{{ .Vars.port }}/healthz"}}
`, nil},
		{"template with a missing variable", `
name: plant
vars: {host: example.com}
children:
  - name: line
    children:
      - name: web
        kind: process
        process: {command: serve, args: ["--port", "{{ .Vars.port }}"]}
`, []string{`children[0].children[0].process.args[1]: template "{{ .Vars.port }}": no variable "port"`}},
		{"template that does not parse", `
name: web
kind: process
process: {command: "{{ .Vars.cmd"}
`, []string{`process.command: bad template "{{ .Vars.cmd": 1: unclosed action`}},
		{"vars of a sibling are not inherited", `
name: plant
children:
  - name: a
    kind: process
    vars: {port: "1"}
    process: {command: "x{{ .Vars.port }}"}
  - name: b
    kind: process
    process: {command: "x{{ .Vars.port }}"}
`, []string{`children[1].process.command: template "x{{ .Vars.port }}": no variable "port"`}},
		{"intensity without period", `
name: plant
intensity: {maxRestarts: 3}
children: [{name: a, kind: stub}]
`, []string{"intensity.period: required"}},
		{"intensity zero period and cooldown", `
name: plant
intensity: {maxRestarts: 1, period: 0s, cooldown: 0s}
children: [{name: a, kind: stub}]
`, []string{"intensity.period: must be > 0", "intensity.cooldown: must be > 0"}},
		{"bad desired", `
name: plant
children:
  - name: a
    kind: stub
    desired: paused
`, []string{`children[0].desired: "paused" is not one of [running stopped]`}},
		{"bad restart", `
name: plant
children:
  - name: a
    kind: stub
    restart: sometimes
`, []string{`children[0].restart: "sometimes" is not one of [permanent transient temporary]`}},
		{"unknown stub outcome", `
name: plant
children:
  - name: a
    kind: stub
    stub:
      outcomes:
        start: [success, explode, failure]
`, []string{`children[0].stub.outcomes.start[1]: unknown outcome "explode" (success, failure, timeout, error or permanent)`}},
		{"unknown stub action", `
name: a
kind: stub
stub:
  outcomes:
    launch: [explode]
`, []string{`stub.outcomes.launch: unknown action "launch" (start, stop, restart or observe)`}},
		{"unknown stub actions are reported in sorted order", `
name: a
kind: stub
stub:
  outcomes:
    zeta: [success]
    alpha: [success]
    start: [boom]
    mid: [success]
    beta: [success]
`, []string{
			`stub.outcomes.alpha: unknown action "alpha" (start, stop, restart or observe)`,
			`stub.outcomes.beta: unknown action "beta" (start, stop, restart or observe)`,
			`stub.outcomes.mid: unknown action "mid" (start, stop, restart or observe)`,
			`stub.outcomes.start[0]: unknown outcome "boom" (success, failure, timeout, error or permanent)`,
			`stub.outcomes.zeta: unknown action "zeta" (start, stop, restart or observe)`,
		}},
		{"every stub outcome is accepted", `
name: a
kind: stub
stub:
  outcomes:
    start: [success, failure, timeout, error, permanent]
    stop: [success]
    restart: [failure]
    observe: [timeout]
`, nil},
		{"stub negatives", `
name: a
kind: stub
stub: {delay: -1s, crashAfter: -1s, exitAfter: -1s, failureRate: 1.5}
`, []string{"stub.delay: must be >= 0", "stub.crashAfter: must be >= 0", "stub.exitAfter: must be >= 0", "stub.failureRate: must be between 0 and 1"}},
		{"negative failure rate", "name: a\nkind: stub\nstub: {failureRate: -0.1}\n", []string{"stub.failureRate: must be between 0 and 1"}},
		{"driver block for the wrong kind", `
name: plant
children:
  - name: a
    kind: stub
    http: {health: "http://localhost/health"}
`, []string{`children[0].http: driver block http: given for a worker of kind "stub"`}},
		{"process kind with a stub block", `
name: a
kind: process
stub: {delay: 1s}
process: {command: /bin/true}
`, []string{`stub: driver block stub: given for a worker of kind "process"`}},
		{"http kind needs a block", "name: a\nkind: http\n", []string{"http: required for kind http (at least health.url)"}},
		{"http ok", "name: a\nkind: http\nhttp: {health: {url: 'http://127.0.0.1:1/health', failureThreshold: 2}}\n", nil},
		{"process without command", "name: a\nkind: process\nprocess: {args: [x]}\n", []string{"process.command: required"}},
		{"process bad fields", "name: a\nkind: process\nprocess: {command: sleep, startSeconds: 0s, host: 'a/b'}\n", []string{"process.startSeconds: must be > 0", `process.host: "a/b" is not a valid host name (letters, digits, '.', '_' and '-')`}},
		{"process unknown field", "name: a\nkind: process\nprocess: {command: sleep, shell: true}\n", []string{`process: invalid process block: json: unknown field "shell"`}},
		{"process ok", "name: a\nkind: process\nprocess: {command: sleep, args: ['60'], startSeconds: 500ms, host: web-1}\n", nil},
		{"watchdog without notify", "name: a\nkind: process\nprocess: {command: sleep, watchdog: 10s}\n", []string{"process.watchdog: needs notify: true (the service feeds the watchdog with WATCHDOG=1)"}},
		{"watchdog too short", "name: a\nkind: process\nprocess: {command: sleep, notify: true, watchdog: 10ms}\n", []string{"process.watchdog: must be at least 1s, not 10ms"}},
		{"resources", "name: a\nkind: process\nprocess: {command: sleep, resources: {memoryMax: 12Mb, cpuMax: -1, pidsMax: -2}, restartOnMemory: lots}\n", []string{
			`process.resources.memoryMax: "12Mb" is not a size (bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T: 256Mi)`,
			"process.resources.cpuMax: must be at least 0.01 (cores), not -1",
			"process.resources.pidsMax: must be > 0, not -2",
			`process.restartOnMemory: "lots" is not a size (bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T: 256Mi)`}},
		{"resources empty", "name: a\nkind: process\nprocess: {command: sleep, resources: {}}\n", []string{"process.resources: names no limit (memoryMax, cpuMax, pidsMax)"}},
		{"logs", "name: a\nkind: process\nprocess: {command: sleep, logs: {maxSize: 1Ki, keep: 1001, maxAge: 30s}}\n", []string{
			`process.logs.maxSize: 1Ki is less than 4Ki`, `process.logs.keep: must be from 1 to 1000, not 1001`, `process.logs.maxAge: must be at least 1m, not 30s`}},
		{"logs empty", "name: a\nkind: process\nprocess: {command: sleep, logs: {}}\n", []string{`process.logs: names nothing (maxSize, keep, maxAge)`}},
		{"logs ok", "name: a\nkind: process\nprocess: {command: sleep, logs: {maxSize: 100Mi, keep: 10, maxAge: 7d}}\n", nil},
		{"resources ok", "name: a\nkind: process\nprocess: {command: sleep, resources: {memoryMax: 256Mi, cpuMax: 0.5, pidsMax: 100}, restartOnMemory: 200Mi}\n", nil},
		{"reload", "name: a\nkind: process\nprocess: {command: sleep, reload: {signal: KILL}}\n", []string{"process.reload.signal: unknown signal \"KILL\" (HUP, USR1, USR2, INT, TERM, QUIT, WINCH)"}},
		{"reload both", "name: a\nkind: process\nprocess: {command: sleep, reload: {signal: HUP, exec: [kill]}}\n", []string{"process.reload: names both signal and exec: choose one"}},
		{"reload empty exec", "name: a\nkind: process\nprocess: {command: sleep, reload: {exec: []}}\n", []string{"process.reload.exec: needs a command (an argv: [cmd, args...])"}},
		{"reload ok", "name: a\nkind: process\nprocess: {command: sleep, reload: {}}\n", nil},
		{"http reload url", "name: a\nkind: http\nhttp: {health: {url: 'http://x/h'}, reload: 'http://x/reload'}\n", nil},
		{"http reload bad", "name: a\nkind: http\nhttp: {health: {url: 'http://x/h'}, reload: 'ftp://x'}\n", []string{"http.reload.url: \"ftp://x\" is not an absolute http(s) URL"}},
		{"notify with watchdog ok", "name: a\nkind: process\nprocess: {command: sleep, notify: true, watchdog: 10s}\n", nil},
		{"process secrets ok", `
name: a
kind: process
process:
  command: app
  env: {A: plain, B: {file: /etc/app/b}, C: {env: APP_C}}
  envFile: /etc/app/env
  inheritEnv: [HTTP_PROXY]
  user: app
  group: app
  limits: {nofile: 4096, nproc: 64, core: 0}
`, nil},
		{"envFile as a list", "name: a\nkind: process\nprocess: {command: app, envFile: [/a, /b]}\n", nil},
		{"secret reference with both, neither, relative, bad names", `
name: a
kind: process
process:
  command: app
  env:
    A: {file: /x, env: Y}
    B: {}
    C: {file: relative/x}
    D: {env: "1BAD"}
    "E-F": x
  envFile: [etc/env]
  inheritEnv: ["A B"]
  user: "Bad User"
  group: wheel
`, []string{
			"process.env.A: a secret reference takes one of file and env, not both",
			"process.env.B: a secret reference needs file (an absolute path) or env (a variable name)",
			`process.env.C.file: "relative/x" is not an absolute path`,
			`process.env.D.env: "1BAD" is not a variable name`,
			`process.env.E-F: "E-F" is not a variable name (letters, digits and '_', not starting with a digit)`,
			`process.envFile[0]: "etc/env" is not an absolute path`,
			`process.inheritEnv[0]: "A B" is not a variable name`,
			`process.user: "Bad User" is not a user name or number`,
		}},
		{"group without user", "name: a\nkind: process\nprocess: {command: app, group: wheel}\n", []string{"process.group: needs user (a group alone is not a change of identity)"}},
		{"secret reference unknown key", "name: a\nkind: process\nprocess: {command: app, env: {A: {path: /x}}}\n",
			[]string{`process: invalid process block: secret reference: unknown key "path" (want file or env)`}},
		{"header secret reference", `
name: a
kind: http
http:
  start: {url: "http://h/start", headers: {Authorization: {file: /etc/t}, X-Bad: {file: t}}}
  health: {url: "http://h/health", headers: {X-Token: {env: ""}}}
`, []string{
			`http.start.headers.X-Bad.file: "t" is not an absolute path`,
			`http.health.headers.X-Token: a secret reference needs file (an absolute path) or env (a variable name)`,
		}},
		{"worker options on a supervisor", `
name: plant
timeouts: {start: 1s}
retry: {maxAttempts: 2}
observe: {interval: 1s}
stub: {delay: 1s}
process: {command: x}
http: {health: x}
children: [{name: a, kind: stub}]
`, []string{
			"timeouts: only workers (nodes with a kind) take timeouts",
			"retry: only workers (nodes with a kind) take retry",
			"observe: only workers (nodes with a kind) take observe",
			"stub: only workers (nodes with a kind) take stub",
			"process: only workers (nodes with a kind) take process",
			"http: only workers (nodes with a kind) take http",
		}},
		{"supervisor options on a worker", `
name: a
kind: stub
strategy: one_for_one
intensity: {maxRestarts: 1, period: 1s}
`, []string{
			"strategy: only supervisors (nodes with children) take a strategy",
			"intensity: only supervisors (nodes with children) take an intensity",
		}},
		{"bad retry", `
name: a
kind: stub
retry: {maxAttempts: -1, initialInterval: 0s, backoffCoefficient: 0.5, maxInterval: 0s}
`, []string{
			"retry.maxAttempts: must be >= 1 (or left out for the default, 3)",
			"retry.initialInterval: must be > 0",
			"retry.maxInterval: must be > 0",
			"retry.backoffCoefficient: must be >= 1",
		}},
		{"retry max below initial", "name: a\nkind: stub\nretry: {initialInterval: 5s, maxInterval: 1s}\n",
			[]string{"retry.maxInterval: must be >= initialInterval"}},
		{"bad backoff", `
name: a
kind: stub
backoff: {initial: -1s, max: 0s, resetAfter: 0s, multiplier: 0.5, jitter: 1.5}
`, []string{
			"backoff.initial: must be > 0",
			"backoff.max: must be > 0",
			"backoff.resetAfter: must be > 0",
			"backoff.multiplier: must be >= 1",
			"backoff.jitter: must be between 0 and 1",
		}},
		{"negative jitter", "name: a\nkind: stub\nbackoff: {jitter: -0.1}\n", []string{"backoff.jitter: must be between 0 and 1"}},
		{"backoff max below initial", "name: a\nkind: stub\nbackoff: {initial: 10s, max: 5s}\n",
			[]string{"backoff.max: must be >= initial"}},
		{"zero jitter and multiplier 1 are fine", "name: a\nkind: stub\nbackoff: {initial: 10ms, jitter: 0, multiplier: 1}\n", nil},
		// A zero delay would restart a failing service in a tight loop that
		// never lets the workflow continue as new.
		{"zero backoff initial is refused", "name: a\nkind: stub\nbackoff: {initial: 0s}\n", []string{"backoff.initial: must be > 0"}},
		{"zero observe interval", "name: a\nkind: stub\nobserve: {interval: 0s}\n", []string{"observe.interval: must be > 0"}},
		{"bad variable names", `
name: plant
vars: {"bad key": x, ok_1: y, "-x": z}
children:
  - name: a
    kind: stub
    vars: {"a/b": c}
`, []string{
			`vars.-x: "-x" is not a valid variable name`,
			`vars.bad key: "bad key" is not a valid variable name`,
			`children[0].vars.a/b: "a/b" is not a valid variable name`,
		}},
		{"notify ok, inherited, with a header secret", `
name: plant
notify: {webhook: "https://hooks.example.com/steward", on: [failed, gaveUp], headers: {Authorization: {file: /etc/hook-token}}}
children:
  - {name: a, kind: stub, notify: {webhook: "http://127.0.0.1:9000/x"}}
  - {name: b, kind: stub, notify: {webhook: {env: SLACK_WEBHOOK_URL}, on: []}}
`, nil},
		{"notify webhook reference", "name: a\nkind: stub\nnotify: {webhook: {file: hook-url}}\n",
			[]string{`notify.webhook.file: "hook-url" is not an absolute path`}},
		{"bad notify", `
name: plant
notify: {webhook: "ftp://x", on: [failed, exploded], headers: {"Bad Header": x}}
children:
  - {name: a, kind: stub, notify: {on: [recovered]}}
`, []string{
			`notify.webhook: "ftp://x" is not an absolute http(s) URL`,
			`notify.on[1]: unknown event "exploded" (failed, gaveUp, unknown, recovered, refused, updateFailed or reverted)`,
			`notify.headers.Bad Header: "Bad Header" is not a valid header name`,
			"children[0].notify.webhook: required",
		}},
		{"dependsOn ok", `
name: plant
children:
  - {name: web, kind: stub, dependsOn: [db, cache]}
  - {name: db, kind: stub}
  - {name: cache, kind: stub, dependsOn: [db]}
`, nil},
		{"dependsOn unknown, self, twice", `
name: plant
children:
  - {name: web, kind: stub, dependsOn: [db, web, dbx, db]}
  - {name: db, kind: stub}
`, []string{
			`children[0].dependsOn[1]: "web" cannot depend on itself`,
			`children[0].dependsOn[2]: no sibling named "dbx"`,
			`children[0].dependsOn[3]: "db" is named twice`,
		}},
		{"dependsOn cycle", `
name: plant
children:
  - {name: a, kind: stub, dependsOn: [c]}
  - {name: b, kind: stub, dependsOn: [a]}
  - {name: c, kind: stub, dependsOn: [b]}
  - {name: d, kind: stub}
`, []string{"children[0].dependsOn: dependency cycle: a -> c -> b -> a"}},
		{"dependsOn on the root", "name: a\nkind: stub\ndependsOn: [b]\n", []string{"dependsOn: the root has no siblings to depend on"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, problems(t, c.yml))
		})
	}
}

func TestSeveralProblemsAreReportedTogetherOnePerLine(t *testing.T) {
	yml := `
name: plant
strategy: sideways
children:
  - name: a/b
    kind: stub
    timeouts: {start: 0s}
  - name: c
    kind: docker
    desired: maybe
  - name: c
    kind: stub
    stub:
      outcomes:
        stop: [success, boom]
`
	_, err := Parse([]byte(yml))
	require.Error(t, err)
	require.Equal(t, strings.Join([]string{
		`strategy: unknown strategy "sideways" (one_for_one, one_for_all or rest_for_one)`,
		`children[0].name: "a/b" ` + nameRule,
		`children[0].timeouts.start: must be > 0`,
		`children[1].desired: "maybe" is not one of [running stopped]`,
		`children[1].kind: unknown kind "docker" (stub, process or http)`,
		`children[2].name: duplicate name "c" (also children[1])`,
		`children[2].stub.outcomes.stop[1]: unknown outcome "boom" (success, failure, timeout, error or permanent)`,
	}, "\n"), err.Error())
}

func TestUnknownYAMLFieldIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, yml, field, line string
	}{
		{"top level", "name: a\nkind: stub\ntimeout: {start: 1s}\n", "timeout", "[3:"},
		{"nested in a child's stub", "name: plant\nchildren:\n  - name: a\n    kind: stub\n    stub: {dealy: 1s}\n", "dealy", "[5:"},
		{"nested in intensity", "name: plant\nintensity: {maxRestart: 1, period: 1s}\nchildren: [{name: a, kind: stub}]\n", "maxRestart", "[2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yml))
			require.Error(t, err)
			var ps Problems
			require.True(t, errors.As(err, &ps))
			require.Len(t, ps, 1)
			require.Contains(t, err.Error(), "invalid YAML")
			require.Contains(t, err.Error(), "unknown field")
			require.Contains(t, err.Error(), `"`+c.field+`"`)
			require.Contains(t, err.Error(), c.line, "the line is reported")
			require.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestInvalidDurationIsRefused(t *testing.T) {
	for _, yml := range []string{
		"name: a\nkind: stub\ntimeouts: {start: soon}\n",
		"name: a\nkind: stub\nstub: {delay: soon}\n",
		"name: plant\nintensity: {maxRestarts: 1, period: soon}\nchildren: [{name: a, kind: stub}]\n",
	} {
		_, err := Parse([]byte(yml))
		require.Error(t, err, yml)
		var ps Problems
		require.True(t, errors.As(err, &ps))
		require.Contains(t, err.Error(), `invalid duration "soon"`, yml)
		require.Contains(t, err.Error(), "1.5s", "the message shows the expected format")
	}
	// A bare number is not a Go duration either.
	_, err := Parse([]byte("name: a\nkind: stub\ntimeouts: {start: 30}\n"))
	require.Error(t, err)
}

// docs/contract.md: an invalid spec is refused "with one line per problem naming its
// path". A bad duration names its line and column.
func TestInvalidDurationNamesWhereItIs(t *testing.T) {
	_, err := Parse([]byte("name: a\nkind: stub\ntimeouts: {start: 1s}\nretry: {maxInterval: soon}\n"))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "line 4 column 22", msg)
}

func TestParseRefusesMalformedYAML(t *testing.T) {
	for _, yml := range []string{"- a\n- b\n", "name: [unclosed\n", "name: a\nname: b\nkind: stub\n"} {
		_, err := Parse([]byte(yml))
		require.Error(t, err, yml)
		require.Contains(t, err.Error(), "invalid YAML", yml)
	}
}

func TestValidateAcceptsAValidTreeBuiltInCode(t *testing.T) {
	n := Node{Name: "plant", Intensity: &Intensity{MaxRestarts: 1, Period: Dur(time.Second)}, Children: []Node{
		{Name: "a", Kind: KindStub, Stub: &Stub{FailureRate: 1}},
		{Name: "b", Kind: KindStub, Desired: DesiredRunning, Restart: RestartPermanent},
	}}
	require.Empty(t, Validate(n))
}

func TestValidateWorker(t *testing.T) {
	require.Empty(t, ValidateWorker("", Node{Name: "press", Kind: KindStub}))

	ps := ValidateWorker("", Node{Name: "press", Kind: KindStub, Timeouts: &Timeouts{Start: Dur(0)}})
	require.Equal(t, "timeouts.start: must be > 0", ps.Error(), "paths are relative to the worker")

	ps = ValidateWorker("", Node{Name: "line", Children: []Node{{Name: "a", Kind: KindStub}}})
	require.Equal(t, "children: a worker's spec cannot have children", ps.Error())
}

func TestProblemsError(t *testing.T) {
	require.Equal(t, "just a message", Problem{Msg: "just a message"}.String())
	require.Equal(t, "a.b: bad", Problem{Path: "a.b", Msg: "bad"}.String())
	ps := Problems{{Path: "x", Msg: "one"}, {Msg: "two"}, {Path: "children[3].y", Msg: "three"}}
	require.Equal(t, "x: one\ntwo\nchildren[3].y: three", ps.Error())
	require.Equal(t, "", Problems{}.Error())
}

func TestDuration(t *testing.T) {
	var nilD *Duration
	require.Equal(t, time.Duration(0), nilD.D())
	require.Equal(t, 1500*time.Millisecond, Dur(1500*time.Millisecond).D())

	b, err := Duration(1500 * time.Millisecond).MarshalText()
	require.NoError(t, err)
	require.Equal(t, "1.5s", string(b))

	var d Duration
	require.NoError(t, d.UnmarshalText([]byte("2m3s")))
	require.Equal(t, Duration(123*time.Second), d)
	err = d.UnmarshalText([]byte("later"))
	require.EqualError(t, err, `invalid duration "later" (want a Go duration such as 1.5s or 2m, or days: 30d)`)
	require.Equal(t, Duration(123*time.Second), d, "a failed parse leaves the value alone")
}

func sampleNode() Node {
	jitter := 0.25
	return Node{
		Name:      "plant",
		Strategy:  OneForOne,
		Intensity: &Intensity{MaxRestarts: 3, Period: Dur(90 * time.Second), Cooldown: Dur(5 * time.Minute)},
		Vars:      map[string]string{"port": "8080"},
		Children: []Node{
			{
				Name: "press", Kind: KindStub, Desired: DesiredRunning, Restart: RestartTransient,
				Timeouts: &Timeouts{Start: Dur(1500 * time.Millisecond), Stop: Dur(2 * time.Second)},
				Retry:    &Retry{MaxAttempts: 2, InitialInterval: Dur(100 * time.Millisecond), BackoffCoefficient: 1.5, MaxInterval: Dur(time.Second)},
				Backoff:  &Backoff{Initial: Dur(time.Second), Max: Dur(time.Minute), Multiplier: 2, Jitter: &jitter, ResetAfter: Dur(time.Minute)},
				Observe:  &Observe{Interval: Dur(30 * time.Second)},
				Stub: &Stub{Delay: Duration(250 * time.Millisecond), FailureRate: 0.1, Seed: 9,
					CrashAfter: Duration(time.Minute), Outcomes: map[string][]string{"start": {OutcomeTimeout, OutcomeSuccess}}},
			},
			{Name: "gate", Kind: KindProcess, Process: map[string]any{"command": "/bin/sleep", "host": "local"}},
		},
	}
}

func TestNodeJSONRoundTripWithDurationStrings(t *testing.T) {
	n := sampleNode()
	b, err := json.Marshal(n)
	require.NoError(t, err)
	js := string(b)
	require.Contains(t, js, `"start":"1.5s"`)
	require.Contains(t, js, `"period":"1m30s"`)
	require.Contains(t, js, `"cooldown":"5m0s"`)
	require.Contains(t, js, `"initialInterval":"100ms"`)
	require.Contains(t, js, `"delay":"250ms"`)
	require.Contains(t, js, `"crashAfter":"1m0s"`)
	require.NotContains(t, js, `"exitAfter"`, "unset stub durations are omitted")
	require.NotContains(t, js, `"restart":{`, "unset fields are omitted")
	require.NotContains(t, js, "1500000000", "durations are never raw nanoseconds")

	var back Node
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, n, back)

	var bad Node
	err = json.Unmarshal([]byte(`{"name":"a","timeouts":{"start":"soon"}}`), &bad)
	require.Error(t, err)
	require.Contains(t, err.Error(), `invalid duration "soon"`)
}

func TestParsedYAMLSurvivesAJSONRoundTrip(t *testing.T) {
	n, err := Parse([]byte(plantYAML))
	require.NoError(t, err)
	b, err := json.Marshal(n)
	require.NoError(t, err)
	var back Node
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, n, back)
	require.Empty(t, Validate(back))
}

func TestUpdateJSONRoundTrip(t *testing.T) {
	u := Update{Generation: 7, Spec: sampleNode().Children[0]}
	b, err := json.Marshal(u)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), `{"generation":7,"spec":{"name":"press",`), string(b))
	require.Contains(t, string(b), `"start":"1.5s"`)
	var back Update
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, u, back)

	b, err = json.Marshal(Update{Spec: Node{Name: "x", Kind: KindStub}})
	require.NoError(t, err)
	require.JSONEq(t, `{"spec":{"name":"x","kind":"stub"}}`, string(b), "generation 0 is omitted")
}

func TestWorkersCountsLeaves(t *testing.T) {
	n, err := Parse([]byte(plantYAML))
	require.NoError(t, err)
	require.Equal(t, 3, n.Workers())
	require.Equal(t, 2, n.Children[1].Workers())
	leaf := Node{Name: "w", Kind: KindStub}
	require.Equal(t, 1, leaf.Workers())
	deep := Node{Name: "r", Children: []Node{{Name: "a", Children: []Node{{Name: "b", Children: []Node{leaf, leaf}}}}, leaf}}
	require.Equal(t, 3, deep.Workers())
}

// Regression: an initial interval above the default maximum, with no maximum
// given, made a RetryPolicy the server refuses (max < initial).
func TestResolvedMaximaNeverFallBelowExplicitInitials(t *testing.T) {
	n := Node{Name: "w", Kind: KindStub,
		Retry:   &Retry{InitialInterval: Dur(20 * time.Second)},
		Backoff: &Backoff{Initial: Dur(2 * time.Minute)}}
	r := n.Resolved()
	require.Equal(t, 20*time.Second, r.Retry.MaxInterval.D())
	require.Equal(t, 2*time.Minute, r.Backoff.Max.D())
	require.Empty(t, Validate(n))
}

// StartOrder puts each child after what it depends on, otherwise in spec
// order; without dependsOn it keeps spec order exactly.
func TestStartOrder(t *testing.T) {
	names := func(ns []Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	plain := []Node{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	require.Equal(t, []string{"a", "b", "c"}, names(StartOrder(plain)))
	deps := []Node{{Name: "web", DependsOn: []string{"db", "cache"}}, {Name: "db"}, {Name: "worker"}, {Name: "cache", DependsOn: []string{"db"}}}
	require.Equal(t, []string{"db", "worker", "cache", "web"}, names(StartOrder(deps)))
	require.Equal(t, []string{"web", "db", "worker", "cache"}, names(deps), "its input is left alone")
}

// A child inherits its parent's notify unless it has its own, as vars.
func TestInheritNotify(t *testing.T) {
	parent := Node{Name: "p", Notify: &Notify{Webhook: Literal("http://h/p")}}
	require.Equal(t, "http://h/p", Inherit(parent, Node{Name: "a"}).Notify.Webhook.Literal)
	own := &Notify{Webhook: Literal("http://h/a"), On: []string{EventFailed}}
	require.Same(t, own, Inherit(parent, Node{Name: "a", Notify: own}).Notify)
	require.True(t, own.Wants(EventFailed))
	require.False(t, own.Wants(EventRecovered))
	require.True(t, parent.Notify.Wants(EventRecovered), "on defaults to every event")
}

func TestSizeBytes(t *testing.T) {
	for in, want := range map[Size]int64{"256Mi": 256 << 20, "1Gi": 1 << 30, "1.5G": 1_500_000_000, "4096": 4096, "64Ki": 64 << 10} {
		got, err := in.Bytes()
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []Size{"", "Mi", "12Mb", "-1Gi", "0", "NaN"} {
		_, err := bad.Bytes()
		require.Error(t, err, bad)
	}
	require.Equal(t, "256Mi", FormatSize(256<<20))
	require.Equal(t, "1.5Gi", FormatSize(3<<29))
}
