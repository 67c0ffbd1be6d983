package aegis

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an error answer of the API: {"error": {"code", "message", "details"}} with its status.
// Use errors.As to get it, or the Is… helpers.
type Error struct {
	// StatusCode is the HTTP status (404, 422, 429, …).
	StatusCode int
	// Code is the API's machine-readable code ("not_found", "validation_failed", "rate_limited", …).
	Code string
	// Message is the human-readable explanation.
	Message string
	// Details carries structured context: invalid fields, CSV rows (Details["rows"]), reasons.
	Details map[string]any
	// RequestID is the answer's x-request-id, to quote when reporting a problem.
	RequestID string
	// Header holds the answer's headers (Retry-After, …).
	Header http.Header
	// Body is the raw answer body.
	Body []byte
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("aegis: %d %s: %s", e.StatusCode, e.Code, e.Message)
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	return msg
}

// ConnectionError is a request that got no answer: the connection failed or broke.
type ConnectionError struct{ Err error }

func (e *ConnectionError) Error() string { return "aegis: connection error: " + e.Err.Error() }
func (e *ConnectionError) Unwrap() error { return e.Err }

// TimeoutError is a request whose attempt ran past the client's (or the call's) timeout.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return "aegis: request timed out: " + e.Err.Error() }
func (e *TimeoutError) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr, true
	}
	return nil, false
}

// IsStatus reports whether err is an API error with this HTTP status.
func IsStatus(err error, status int) bool {
	apiErr, ok := AsError(err)
	return ok && apiErr.StatusCode == status
}

// IsBadRequest reports a 400 answer.
func IsBadRequest(err error) bool { return IsStatus(err, http.StatusBadRequest) }

// IsUnauthorized reports a 401 answer (missing or invalid API key).
func IsUnauthorized(err error) bool { return IsStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403 answer (the key lacks a scope).
func IsForbidden(err error) bool { return IsStatus(err, http.StatusForbidden) }

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool { return IsStatus(err, http.StatusNotFound) }

// IsConflict reports a 409 answer.
func IsConflict(err error) bool { return IsStatus(err, http.StatusConflict) }

// IsValidation reports a 422 answer (see Details for the fields or rows at fault).
func IsValidation(err error) bool { return IsStatus(err, http.StatusUnprocessableEntity) }

// IsRateLimited reports a 429 answer (after the retries, if any).
func IsRateLimited(err error) bool { return IsStatus(err, http.StatusTooManyRequests) }

// IsConnection reports a connection error (no answer).
func IsConnection(err error) bool {
	var c *ConnectionError
	return errors.As(err, &c)
}

// IsTimeout reports a request that timed out.
func IsTimeout(err error) bool {
	var t *TimeoutError
	return errors.As(err, &t)
}
