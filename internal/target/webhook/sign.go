package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks symmetric scheme: a secret is "whsec_" and the
// base64 of a random key of 24 to 64 bytes; a signature is "v1," and the
// base64 of HMAC-SHA256(key, "{msg_id}.{timestamp}.{body}").
const (
	secretPrefix = "whsec_"
	minKeyLen    = 24
	maxKeyLen    = 64
	newKeyLen    = 32
	sigVersion   = "v1,"
)

// NewSecret returns a fresh signing secret, "whsec_" and the base64 of 32
// random bytes, for an operator creating a webhook target: the receiver
// verifies with the same string.
func NewSecret() (string, error) {
	key := make([]byte, newKeyLen)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook secret: read random key: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// Sign returns the webhook-signature of one request: "v1," and the base64
// of HMAC-SHA256(key, msgID + "." + unix seconds of ts + "." + body), with
// the key read from secret ("whsec_" + base64). It is what a Sender puts
// in the header, exported so tools and tests outside the package can sign
// alike. msgID must be non-empty and hold no "." (the scheme's separator)
// and nothing a header cannot carry.
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	key, err := parseSecret(secret)
	if err != nil {
		return "", err
	}
	if err := checkMsgID(msgID); err != nil {
		return "", err
	}
	return sign(hmac.New(sha256.New, key), msgID, ts, body), nil
}

// sign computes the signature with mac, a fresh or reset HMAC-SHA256 of
// the key.
func sign(mac hash.Hash, msgID string, ts time.Time, body []byte) string {
	var num [20]byte
	mac.Write([]byte(msgID))
	mac.Write([]byte{'.'})
	mac.Write(strconv.AppendInt(num[:0], ts.Unix(), 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return sigVersion + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// parseSecret reads a "whsec_" secret into its key. Its errors say what is
// wrong with the secret without ever quoting it: a secret in an error
// text would end up in logs and API answers.
func parseSecret(secret string) ([]byte, error) {
	if secret == "" {
		return nil, errors.New("webhook secret is empty: want \"whsec_\" followed by the base64 of a random key (see NewSecret)")
	}
	enc, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return nil, errors.New("webhook secret does not start with \"whsec_\"")
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		// Some tools print base64 without its padding; accept that too.
		var rawErr error
		key, rawErr = base64.RawStdEncoding.DecodeString(enc)
		if rawErr != nil {
			return nil, fmt.Errorf("webhook secret: the part after \"whsec_\" is not base64 (%d characters): %w", len(enc), err)
		}
	}
	switch {
	case len(key) < minKeyLen:
		return nil, fmt.Errorf("webhook secret: key too short: %d bytes, want at least %d", len(key), minKeyLen)
	case len(key) > maxKeyLen:
		return nil, fmt.Errorf("webhook secret: key too long: %d bytes, want at most %d", len(key), maxKeyLen)
	}
	return key, nil
}

// checkMsgID refuses a message id the scheme cannot sign unambiguously.
func checkMsgID(id string) error {
	if id == "" {
		return errors.New("webhook id is empty")
	}
	if strings.Contains(id, ".") {
		return fmt.Errorf("webhook id %q holds a \".\", the signature's separator", id)
	}
	if !validHeaderValue(id) {
		return fmt.Errorf("webhook id %q holds a character a header cannot carry", id)
	}
	return nil
}
