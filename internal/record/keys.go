package record

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/secure-systems-lab/go-securesystemslib/signerverifier"
)

// Key algorithms for GenerateKey.
const (
	KeyEd25519   = "ed25519"
	KeyECDSAP256 = "ecdsa-p256"
)

// GenerateKey returns a new key pair as PEM: the private key in PKCS #8
// ("PRIVATE KEY") and the public key in PKIX ("PUBLIC KEY").
func GenerateKey(alg string) (privPEM, pubPEM []byte, err error) {
	var priv, pub any
	switch alg {
	case KeyEd25519, "":
		pk, sk, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		priv, pub = sk, pk
	case KeyECDSAP256:
		sk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		priv, pub = sk, &sk.PublicKey
	default:
		return nil, nil, fmt.Errorf("unknown key type %q (want %s or %s)", alg, KeyEd25519, KeyECDSAP256)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	pubDer, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDer}), nil
}

// LoadSignerVerifier parses a PEM key (private for signing, public for
// verifying) with go-securesystemslib. Only Ed25519 and ECDSA P-256 are
// accepted.
func LoadSignerVerifier(pemBytes []byte) (dsse.SignerVerifier, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("key is not PEM")
	}
	if err := checkAlgorithm(block); err != nil {
		return nil, err
	}
	k, err := signerverifier.LoadKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	switch k.KeyType {
	case signerverifier.ED25519KeyType:
		return signerverifier.NewED25519SignerVerifierFromSSLibKey(k)
	case signerverifier.ECDSAKeyType:
		return signerverifier.NewECDSASignerVerifierFromSSLibKey(k)
	}
	return nil, fmt.Errorf("key type %s not supported (want ed25519 or ecdsa-p256)", k.KeyType)
}

func checkAlgorithm(block *pem.Block) error {
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return fmt.Errorf("PEM block %q not supported (want PRIVATE KEY or PUBLIC KEY)", block.Type)
	}
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	switch k := key.(type) {
	case ed25519.PublicKey, ed25519.PrivateKey:
		return nil
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return nil
		}
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return nil
		}
	}
	return fmt.Errorf("key algorithm %T not supported (want Ed25519 or ECDSA P-256)", key)
}
