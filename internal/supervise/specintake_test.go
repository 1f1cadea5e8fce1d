package supervise

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/internal/spec"
)

func TestTakeSpec(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	began := now.Add(-time.Second)
	tree := func(name, desired, strategy string) spec.Node {
		return spec.Node{Name: name, Desired: desired, Strategy: strategy,
			Children: []spec.Node{{Name: "a", Kind: spec.KindStub}}}
	}
	held := SpecHeld{Path: "root", Name: "root", Generation: 4, Desired: spec.DesiredRunning, Strategy: spec.OneForOne, Now: now}
	for _, c := range []struct {
		name    string
		u       spec.Update
		limits  bool
		want    SpecTaken
		problem string // the error names it
		asked   bool   // the limits were asked
		jobs    bool   // the run starts jobs
		bounded bool   // generations are bounded (version 12)
	}{
		{name: "a change that begins here: the next generation, origin now, depth 1",
			u: spec.Update{Spec: tree("root", "", "")}, asked: true,
			want: SpecTaken{Generation: 5, Origin: now, Depth: 1}},
		{name: "handed down: its generation, origin and one level more",
			u: spec.Update{Generation: 9, Spec: tree("root", "", ""), Origin: began, Depth: 2}, asked: true,
			want: SpecTaken{Generation: 9, Origin: began, Depth: 3}},
		{name: "desired stopped: supervision starts afresh",
			u: spec.Update{Spec: tree("root", spec.DesiredStopped, "")}, asked: true,
			want: SpecTaken{Generation: 5, DesiredChanged: true, Origin: now, Depth: 1}},
		{name: "one_for_one to one_for_all: the workers' supervision changes",
			u: spec.Update{Spec: tree("root", "", spec.OneForAll)}, asked: true,
			want: SpecTaken{Generation: 5, StrategyChanged: true, Origin: now, Depth: 1}},
		{name: "another node's spec, limits not asked",
			u: spec.Update{Spec: tree("other", "", "")}, problem: `spec.name "other" does not match this supervisor ("root")`},
		{name: "a supervisor without children",
			u: spec.Update{Spec: spec.Node{Name: "root"}}, asked: true, problem: "children"},
		{name: "a spec that breaks the rules",
			u: spec.Update{Spec: tree("root", "sideways", "")}, asked: true, problem: "desired"},
		{name: "held to the limits: a name too long for a workflow ID",
			u:      spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{{Name: string(make([]byte, 2000)), Kind: spec.KindStub}}}},
			limits: true, asked: true, problem: "name"},
		{name: "a job, to a supervisor of code older than jobs",
			u: spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{jobNode("backup")}}}, asked: true, problem: "backup is a job: this supervisor's code"},
		{name: "a service made a job in place",
			u: spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{jobNode("a")}}}, jobs: true, asked: true, problem: "a: a service or a supervisor cannot become a job in place"},
		{name: "a job made a service in place",
			u: spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{{Name: "nightly", Kind: spec.KindStub}}}}, jobs: true, asked: true, problem: "nightly: a job cannot become a service"},
		{name: "children that expand past what any supervisor ran, limits not held: refused",
			u: spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{
				{Name: "a", Kind: spec.KindStub, Instances: 1000}, {Name: "b", Kind: spec.KindStub, Instances: 1000}, {Name: "c", Kind: spec.KindStub}}}},
			asked: true, problem: "children expand to more than 2000"},
		{name: "a generation sent by hand near 2^63, bounded: refused (the next one would wrap)",
			u: spec.Update{Generation: 1<<63 - 1, Spec: tree("root", "", "")}, bounded: true, asked: true, problem: "generation 9223372036854775807 is out of range"},
		{name: "a negative generation, bounded: refused",
			u: spec.Update{Generation: -3, Spec: tree("root", "", "")}, bounded: true, asked: true, problem: "out of range"},
		{name: "2^32 past its own, bounded: taken",
			u: spec.Update{Generation: 4 + spec.MaxGenerationStep, Spec: tree("root", "", "")}, bounded: true, asked: true,
			want: SpecTaken{Generation: 4 + spec.MaxGenerationStep, Origin: now, Depth: 1}},
		{name: "more than 2^32 past its own, bounded: refused (a worker so far ahead drops every later spec)",
			u: spec.Update{Generation: 5 + spec.MaxGenerationStep, Spec: tree("root", "", "")}, bounded: true, asked: true, problem: "more than 2^32 past this node's (4)"},
		{name: "a generation near 2^63, unbounded (version 11): taken",
			u: spec.Update{Generation: 1<<63 - 1, Spec: tree("root", "", "")}, asked: true,
			want: SpecTaken{Generation: 1<<63 - 1, Origin: now, Depth: 1}},
		{name: "a new job",
			u: spec.Update{Spec: spec.Node{Name: "root", Children: []spec.Node{{Name: "a", Kind: spec.KindStub}, jobNode("backup")}}}, jobs: true, asked: true,
			want: SpecTaken{Generation: 5, Origin: now, Depth: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, asked := held, false
			h.Jobs, h.Services, h.JobNames, h.GenerationBounded = c.jobs, []string{"a"}, []string{"nightly"}, c.bounded
			h.Limits = func() bool { asked = true; return c.limits }
			got, err := TakeSpec(h, c.u)
			require.Equal(t, c.asked, asked, "limits asked")
			if c.problem != "" {
				require.ErrorContains(t, err, c.problem)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func jobNode(name string) spec.Node {
	return spec.Node{Name: name, Kind: spec.KindStub, Stub: &spec.Stub{ExitAfter: spec.Duration(time.Second)}, Job: &spec.Job{Every: spec.Dur(time.Minute)}}
}

// The generation after g stays within spec.MaxGeneration (a count sent
// there by hand is sent again, not past it), and never wraps.
func TestNextGeneration(t *testing.T) {
	require.EqualValues(t, 5, nextGeneration(4, true))
	require.EqualValues(t, spec.MaxGeneration, nextGeneration(spec.MaxGeneration-1, true))
	require.EqualValues(t, spec.MaxGeneration, nextGeneration(spec.MaxGeneration, true))
	require.EqualValues(t, int64(1<<63-1), nextGeneration(1<<63-1, true), "no wrap")
	require.EqualValues(t, spec.MaxGeneration+1, nextGeneration(spec.MaxGeneration, false), "version 11: as it was")
}
