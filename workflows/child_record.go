package workflows

import "github.com/steward-sh/steward/internal/supervise"

// ChildRecord is what a supervisor knows of one child (supervise.ChildRecord:
// part of its carried state, read by every later build).
type ChildRecord = supervise.ChildRecord

// unseenTerminations: an adopted child's terminations are not known yet.
const unseenTerminations = supervise.UnseenTerminations
