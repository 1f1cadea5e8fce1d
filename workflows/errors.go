package workflows

import "errors"

// rootMessage is the innermost error message: "stub: start failed", not the
// activity error wrapping it.
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
