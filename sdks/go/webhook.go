package aegis

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// WebhookSignatureHeader is the header carrying a webhook delivery's signature.
const WebhookSignatureHeader = "X-Service-Signature"

// DefaultWebhookTolerance is how far a signature's timestamp may be from now, either way.
const DefaultWebhookTolerance = 5 * time.Minute

// ErrInvalidSignature is returned by ConstructEvent for a delivery whose signature does not verify
// (wrong secret, altered body, stale or future timestamp, malformed header).
var ErrInvalidSignature = errors.New("aegis: invalid webhook signature")

// VerifyWebhookSignature reports whether header (the X-Service-Signature value,
// "t=<unix seconds>,v1=<hex>[,v1=<hex>…]") signs payload (the raw request body) with secret: one
// v1 must equal HMAC-SHA256(secret, "<t>.<payload>") (several appear while a secret rotates), and
// t must be within tolerance of now in either direction (tolerance <= 0 means 5 minutes). The
// comparison is constant-time; a malformed header is false.
func VerifyWebhookSignature(payload []byte, header, secret string, tolerance time.Duration, now time.Time) bool {
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	var timestamp string
	var signatures [][]byte
	for _, part := range strings.Split(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return false
		}
		switch key {
		case "t":
			if timestamp != "" {
				return false
			}
			timestamp = value
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				continue
			}
			signatures = append(signatures, sig)
		}
	}
	if timestamp == "" || len(signatures) == 0 {
		return false
	}
	seconds, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || seconds < 0 {
		return false
	}
	age := now.Sub(time.Unix(seconds, 0))
	if age > tolerance || age < -tolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write(payload)
	expected := mac.Sum(nil)
	valid := false
	for _, sig := range signatures {
		// Every candidate is compared, so the time taken does not reveal which one matched.
		if hmac.Equal(expected, sig) {
			valid = true
		}
	}
	return valid
}

// ConstructEvent verifies a delivery (with the default 5-minute tolerance, against the current
// time) and parses its body; ErrInvalidSignature if it does not verify.
func ConstructEvent(payload []byte, header, secret string) (*Event, error) {
	return ConstructEventAt(payload, header, secret, DefaultWebhookTolerance, time.Now())
}

// ConstructEventAt is ConstructEvent with an explicit tolerance and clock.
func ConstructEventAt(payload []byte, header, secret string, tolerance time.Duration, now time.Time) (*Event, error) {
	if !VerifyWebhookSignature(payload, header, secret, tolerance, now) {
		return nil, ErrInvalidSignature
	}
	var event Event
	if err := json.Unmarshal(payload, &event); err != nil {
		return nil, errors.New("aegis: webhook body is not an event: " + err.Error())
	}
	return &event, nil
}
