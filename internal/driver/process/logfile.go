package process

import "strings"

// DefaultLogMaxBytes is the size at which a log file is rotated.
const DefaultLogMaxBytes = 10 << 20

// logName is the file name of a workflow's log: the workflow ID with every
// character outside [A-Za-z0-9._-] (path separators included) replaced by
// '_', so it always names a file directly under the log directory.
func logName(workflowID string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, workflowID)
	if name == "" {
		name = "_"
	}
	return name + ".log"
}
