package spec

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
)

// Dependencies between siblings.
//
// `dependsOn: [names]` on a child of a supervisor names siblings that must
// be running before it starts (systemd's After= plus Requires= at start).
// Its supervisor keeps its children in start order (StartOrder): a
// dependency before its dependants, otherwise spec order. It starts a child
// once each named sibling reports running, starts siblings without
// dependencies together, stops in reverse start order, and its group
// restarts (one_for_all, rest_for_one) stop and start in that order, one
// child after the other. rest_for_one restarts the child that ended and
// every child after it in start order, so a dependency's crash restarts its
// dependants too.

func (v *validator) dependsOn(p string, children []Node) {
	names := map[string]bool{}
	for _, c := range children {
		names[c.Name] = true
	}
	for i, c := range children {
		seen := map[string]bool{} // a set: a list of thousands is not walked for each
		for j, d := range c.DependsOn {
			dp := fmt.Sprintf("%s[%d].dependsOn[%d]", join(p, "children"), i, j)
			switch {
			case d == c.Name:
				v.add(dp, "%q cannot depend on itself", d)
			case !names[d]:
				v.add(dp, "no sibling named %q", d)
			case seen[d]:
				v.add(dp, "%q is named twice", d)
			}
			seen[d] = true
		}
	}
	if cycle := dependencyCycle(children); cycle != nil {
		i := slices.IndexFunc(children, func(c Node) bool { return c.Name == cycle[0] })
		v.add(fmt.Sprintf("%s[%d].dependsOn", join(p, "children"), i), "dependency cycle: %s", strings.Join(cycle, " -> "))
	}
}

// dependencyCycle returns a cycle among children's dependencies (its first
// name repeated at its end), or nil. Unknown names and self-dependencies
// are left to the validator's other checks.
func dependencyCycle(children []Node) []string {
	deps := map[string][]string{}
	for _, c := range children {
		deps[c.Name] = c.DependsOn
	}
	const (
		unseen = iota
		onPath
		done
	)
	mark := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		mark[n] = onPath
		path = append(path, n)
		for _, d := range deps[n] {
			if _, ok := deps[d]; !ok || d == n {
				continue
			}
			switch mark[d] {
			case onPath:
				i := slices.Index(path, d)
				return append(slices.Clone(path[i:]), d)
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[n] = done
		return nil
	}
	for _, c := range children {
		if mark[c.Name] == unseen {
			if cycle := visit(c.Name); cycle != nil {
				return cycle
			}
		}
	}
	return nil
}

// StartOrder returns children in the order their supervisor starts them:
// each after the siblings it depends on, otherwise in spec order (a stable
// topological order: of the children whose dependencies are placed, the
// first in spec order goes next). Children without dependsOn keep spec
// order exactly, and the input is returned as it is. It expects a validated
// spec; the members of a cycle come last, in spec order.
func StartOrder(children []Node) []Node {
	if !slices.ContainsFunc(children, func(c Node) bool { return len(c.DependsOn) > 0 }) {
		return children
	}
	index := make(map[string]int, len(children))
	for i, c := range children {
		index[c.Name] = i
	}
	waiting := make([]int, len(children))      // unplaced dependencies of each child
	dependants := make([][]int, len(children)) // who waits for each child
	for i, c := range children {
		for _, d := range c.DependsOn {
			if j, ok := index[d]; ok && j != i {
				waiting[i]++
				dependants[j] = append(dependants[j], i)
			}
		}
	}
	ready := &intHeap{}
	for i := range children {
		if waiting[i] == 0 {
			heap.Push(ready, i)
		}
	}
	placed := make([]bool, len(children))
	out := make([]Node, 0, len(children))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		placed[i] = true
		out = append(out, children[i])
		for _, k := range dependants[i] {
			if waiting[k]--; waiting[k] == 0 {
				heap.Push(ready, k)
			}
		}
	}
	for i, c := range children {
		if !placed[i] {
			out = append(out, c)
		}
	}
	return out
}

// intHeap is a min-heap of spec indexes.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
