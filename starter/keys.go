package main

import (
	"context"
	"time"

	"errors"
	"fmt"
	"go.temporal.io/sdk/client"
	"os"

	"github.com/spf13/cobra"

	"github.com/steward-sh/steward/internal/admission"
	"github.com/steward-sh/steward/internal/spec"
)

// keygenCmd writes an operator's signing key pair (docs/security.md).
func keygenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen PREFIX",
		Short: "Write an Ed25519 key pair for signed specs: PREFIX (private, mode 0600) and PREFIX.pub (for worker --trusted-keys)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			prefix := a[0]
			pub, err := admission.GenerateKey(prefix)
			if errors.Is(err, os.ErrExist) {
				return badInput("%s or %s.pub exists: a key is never overwritten", prefix, prefix)
			}
			if err != nil {
				return failure("keygen: %v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (private key, mode 0600) and %s.pub (public key); key id %s\n", prefix, prefix, admission.KeyID(pub))
			return nil
		},
	}
}

// signSpec signs every worker of a tree with the private key at file, at
// a revision that only grows (the signing time in milliseconds): a host
// refuses a revision older than the ones it has run. A worker the running
// tree holds with a signature by this key that still covers it keeps that
// signature (admission.SignTree): re-applying a file restarts nothing and
// changes no signature.
func signSpec(ctx context.Context, c client.Client, node spec.Node, file string) (spec.Node, error) {
	key, err := admission.LoadPrivateKey(signKeyFile(file))
	if err != nil {
		return node, badInput("--sign-key: %v", err)
	}
	running, _, err := runningTree(ctx, c, node.Name)
	if err != nil {
		return node, err
	}
	signed, err := admission.SignTree(key, node, time.Now().UnixMilli(), running)
	if err != nil {
		return node, badInput("--sign-key: %v", err)
	}
	return signed, nil
}

// SignKeyEnv names the operator's private key when --sign-key is not given.
const SignKeyEnv = "STEWARD_SIGN_KEY"

// signKeyFile is the --sign-key given, or SignKeyEnv ("": none).
func signKeyFile(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(SignKeyEnv)
}

// signKeyFlag adds --sign-key to cmd (what says what it signs).
func signKeyFlag(cmd *cobra.Command, file *string, what string) {
	cmd.Flags().StringVar(file, "sign-key", "", what+" (default: "+SignKeyEnv+"; starter keygen PREFIX writes a key)")
}

// readSigner signs reads of what hosts hold with the key at file (after
// signKeyFile; nil: none given, reads go unsigned). A host with
// --trusted-keys answers only signed reads, and seals their answers.
func readSigner(file string) (*admission.Reader, error) {
	file = signKeyFile(file)
	if file == "" {
		return nil, nil
	}
	key, err := admission.LoadPrivateKey(file)
	if err != nil {
		return nil, badInput("--sign-key: %v", err)
	}
	return &admission.Reader{Key: key}, nil
}
