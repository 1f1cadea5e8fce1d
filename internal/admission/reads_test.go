package admission

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type logRead struct {
	WorkflowID string `json:"workflowId"`
	Lines      int    `json:"lines"`
}

func TestSignedRead_OnlyItsReaderOpensTheAnswer(t *testing.T) {
	_, priv, pub := keys(t)
	trusted := []ed25519.PublicKey{pub}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	rd := &Reader{Key: priv, Now: func() time.Time { return now }}
	req := logRead{WorkflowID: "t/db", Lines: 10}
	auth, reply, err := rd.Sign("log", req)
	require.NoError(t, err)
	require.NoError(t, VerifyRead(trusted, "log", req, &auth, now.Add(time.Minute)))

	sealed, err := Seal(auth.ReplyKey, []byte("DB_PASSWORD=hunter2"))
	require.NoError(t, err)
	require.NotContains(t, string(sealed.Box), "hunter2")
	plain, err := Open(reply, sealed)
	require.NoError(t, err)
	require.Equal(t, "DB_PASSWORD=hunter2", string(plain))
	// A namespace reader who replays the request gets an answer sealed to
	// the operator's key, which its own key does not open.
	_, other, err := (&Reader{Key: priv}).Sign("log", req)
	require.NoError(t, err)
	_, err = Open(other, sealed)
	require.EqualError(t, err, "sealed answer: it does not open with this read's key")

	require.EqualError(t, VerifyRead(trusted, "log", req, nil, now),
		"signature: this host answers only signed reads (--trusted-keys): sign it with the operator's key (--sign-key, or STEWARD_SIGN_KEY)")
	require.ErrorContains(t, VerifyRead(trusted, "log", logRead{WorkflowID: "t/other", Lines: 10}, &auth, now), "does not match its signature", "a signature does not move to another read")
	require.ErrorContains(t, VerifyRead(trusted, "services", req, &auth, now), "does not match its signature", "nor to another kind of read")
	require.ErrorContains(t, VerifyRead(trusted, "log", req, &auth, now.Add(3*time.Minute)), "more than 2m0s from this host's clock")
	require.ErrorContains(t, VerifyRead(trusted, "log", req, &auth, now.Add(-3*time.Minute)), "more than 2m0s from this host's clock")
	swapped := auth
	swapped.ReplyKey = other.PublicKey().Bytes()
	require.ErrorContains(t, VerifyRead(trusted, "log", req, &swapped, now), "does not match its signature", "the reply key is signed: a replay cannot redirect the answer")
	_, otherPriv, _ := keys(t)
	byOther, _, err := (&Reader{Key: otherPriv, Now: rd.Now}).Sign("log", req)
	require.NoError(t, err)
	require.ErrorContains(t, VerifyRead(trusted, "log", req, &byOther, now), "which this host does not trust")
}
