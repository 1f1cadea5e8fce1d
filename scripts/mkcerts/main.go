// Command mkcerts makes the certificates of a Temporal cluster with mutual
// TLS (scripts/cluster.sh up --tls) into a directory:
//
//	ca.pem, ca-key.pem          a CA of its own, which signs the two below
//	server.pem, server-key.pem  the server's: DNS localhost, IP 127.0.0.1
//	                            and ::1; for server and client
//	                            authentication (Temporal's services present
//	                            it to each other and its system worker to
//	                            the frontend)
//	client.pem, client-key.pem  a client's (workers, the starter, the CLI,
//	                            the Web UI): client authentication only
//
// Files that exist are kept (a CA is made once: certificates signed by it
// stay valid across ups); keys are written 0600. ECDSA P-256, valid for
// -days (default 825).
//
//	go run ./scripts/mkcerts -dir .data/cluster/tls
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", "", "directory the certificates go to (made if missing)")
	days := flag.Int("days", 825, "how many days the certificates are valid")
	flag.Parse()
	if *dir == "" || *days < 1 {
		fmt.Fprintln(os.Stderr, "mkcerts: -dir DIR is required, and -days must be >= 1")
		os.Exit(2)
	}
	if err := run(*dir, time.Duration(*days)*24*time.Hour); err != nil {
		fmt.Fprintln(os.Stderr, "mkcerts:", err)
		os.Exit(1)
	}
}

// pair is a certificate and its key.
type pair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func run(dir string, valid time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ca, err := load(dir, "ca")
	if errors.Is(err, fs.ErrNotExist) {
		var made *pair
		made, err = newPair(dir, "ca", nil, valid, func(t *x509.Certificate) {
			t.Subject.CommonName = "steward cluster CA"
			t.IsCA, t.BasicConstraintsValid = true, true
			t.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
		})
		if made != nil {
			ca = *made
		}
	}
	if err != nil {
		return err
	}
	if _, err := load(dir, "server"); errors.Is(err, fs.ErrNotExist) {
		_, err = newPair(dir, "server", &ca, valid, func(t *x509.Certificate) {
			t.Subject.CommonName = "localhost"
			t.DNSNames = []string{"localhost"}
			t.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
			t.KeyUsage = x509.KeyUsageDigitalSignature
			t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		})
		if err != nil {
			return err
		}
	}
	if _, err := load(dir, "client"); errors.Is(err, fs.ErrNotExist) {
		_, err = newPair(dir, "client", &ca, valid, func(t *x509.Certificate) {
			t.Subject.CommonName = "steward client"
			t.KeyUsage = x509.KeyUsageDigitalSignature
			t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// load reads NAME.pem and NAME-key.pem from dir.
func load(dir, name string) (pair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, name+".pem"))
	if err != nil {
		return pair{}, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, name+"-key.pem"))
	if err != nil {
		return pair{}, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return pair{}, fmt.Errorf("%s: not PEM", filepath.Join(dir, name))
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return pair{}, err
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return pair{}, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return pair{}, fmt.Errorf("%s-key.pem: not an ECDSA key", name)
	}
	return pair{cert, key}, nil
}

// newPair writes a new key and a certificate for it, signed by parent (nil:
// self-signed), as NAME-key.pem and NAME.pem.
func newPair(dir, name string, parent *pair, valid time.Duration, shape func(*x509.Certificate)) (*pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	t := &x509.Certificate{SerialNumber: serial, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(valid)}
	shape(t)
	signer, signKey := t, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, t, signer, &key.PublicKey, signKey)
	if err != nil {
		return nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pair{cert, key}, nil
}
