package process

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// On-disk names. A workflow's log file (<stem>.log, its backup
// <stem>.log.1), its process record in StateDir (<stem>.json) and its
// cgroup (<stem>.<8 random hex digits>) are named by one stem:
//
//	<readable>+<hash>      e.g. shop_web+97375646b1deb3d2.log (shop/web)
//
// readable is the workflow ID with every character outside [A-Za-z0-9._-]
// (path separators included) replaced by '_', cut to stemReadableMax
// bytes, for an operator's ls; hash is the first stemHashHex hex digits of
// the SHA-256 of the exact workflow ID. The readable part alone is not one
// to one ("a/b_c" and "a_b/c" both read "a_b_c": two services once shared
// a log and a record, and a restarted worker adopted only one of them);
// the hash tells them apart, and '+' is outside the readable alphabet, so
// a stem of this layout never equals one of the legacy layout below. The
// longest name is 96+1+16 bytes plus ".json.tmp", ".log.1" or a cgroup's
// ".<8 hex>": 122 bytes whatever the ID's length (a file name may have 255).
//
// The legacy layout (every worker before this one, release 5b9cb0e
// included) is the readable part alone, uncut (legacyStem). A record under
// a legacy name is still read, and taken only for the workflow ID stored
// inside it (adopt.go: Recover moves it to that workflow's own name); a
// service adopted from such a record goes on writing its legacy log (it
// holds the file open), which the driver rotates, and TailLog and
// ReadLogFrom read a workflow's legacy log when its log of this layout
// does not exist.
const (
	stemReadableMax = 96
	stemHashHex     = 16
)

// fileStem is the stem of a workflow's log, record and cgroup names.
func fileStem(workflowID string) string {
	readable := legacyStem(workflowID)
	if len(readable) > stemReadableMax {
		readable = readable[:stemReadableMax] // ASCII only: a byte cut is a character cut
	}
	sum := sha256.Sum256([]byte(workflowID))
	return readable + "+" + hex.EncodeToString(sum[:])[:stemHashHex]
}

// legacyStem is the stem of the legacy layout: the workflow ID with every
// character outside [A-Za-z0-9._-] replaced by '_' ("_" for an empty ID).
func legacyStem(workflowID string) string {
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
	return name
}

// logName is the file name of a workflow's log.
func logName(workflowID string) string { return fileStem(workflowID) + ".log" }

// legacyLogName is the file name of a workflow's log in the legacy layout.
func legacyLogName(workflowID string) string { return legacyStem(workflowID) + ".log" }
