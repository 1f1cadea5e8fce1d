package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseDemo parses and validates the shipped example (YAML decode,
// validation, template rendering of every worker).
func BenchmarkParseDemo(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateTree1000 validates a tree of 1,000 workers in 20
// supervisors, as apply does before starting anything.
func BenchmarkValidateTree1000(b *testing.B) {
	root := Node{Name: "plant", Vars: map[string]string{"port": "80"}}
	for g := range 20 {
		sup := Node{Name: "g" + string(rune('a'+g))}
		for i := range 50 {
			sup.Children = append(sup.Children, Node{Name: "w" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Kind: KindProcess,
				Process: map[string]any{"command": "serve", "args": []any{"--port", "{{ .Vars.port }}"}}})
		}
		root.Children = append(root.Children, sup)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ps := Validate(root); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}

// BenchmarkValidateTree10000 validates a tree of 10,000 workers in 100
// supervisors (the bench's scale tree, with a template in every worker):
// the limits' cost is measured against it (issue: no input wedges a tree).
func BenchmarkValidateTree10000(b *testing.B) {
	root := Node{Name: "plant", Vars: map[string]string{"port": "80"}}
	for g := range 100 {
		sup := Node{Name: fmt.Sprintf("g%02d", g)}
		for i := range 100 {
			sup.Children = append(sup.Children, Node{Name: fmt.Sprintf("w%04d", g*100+i), Kind: KindProcess,
				Process: map[string]any{"command": "serve", "args": []any{"--port", "{{ .Vars.port }}", "--name", "{{ .Name }}"}}})
		}
		root.Children = append(root.Children, sup)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ps := Validate(root); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}
