package aegis

import (
	"net/http"
	"time"
)

// RequestOption changes one call: its idempotency key, request id, timeout or headers.
type RequestOption func(*requestConfig)

type requestConfig struct {
	idempotencyKey string
	requestID      string
	timeout        time.Duration
	maxRetries     *int
	headers        http.Header
	lastEventID    string
}

// WithIdempotencyKey sets the Idempotency-Key of a mutation (by default a random one is generated
// per call and reused on its retries). The same key with the same request returns the stored
// answer instead of acting twice.
func WithIdempotencyKey(key string) RequestOption {
	return func(r *requestConfig) { r.idempotencyKey = key }
}

// WithRequestID sends X-Request-Id, which the server uses as the request's id (in its logs and
// the answer's x-request-id header).
func WithRequestID(id string) RequestOption {
	return func(r *requestConfig) { r.requestID = id }
}

// WithRequestTimeout overrides the client's timeout for each attempt of this call.
func WithRequestTimeout(d time.Duration) RequestOption {
	return func(r *requestConfig) { r.timeout = d }
}

// WithRequestMaxRetries overrides the client's max retries for this call.
func WithRequestMaxRetries(n int) RequestOption {
	return func(r *requestConfig) { r.maxRetries = &n }
}

// WithRequestHeader adds a header to this call.
func WithRequestHeader(name, value string) RequestOption {
	return func(r *requestConfig) {
		if r.headers == nil {
			r.headers = http.Header{}
		}
		r.headers.Add(name, value)
	}
}

// WithLastEventID starts a live stream after the event with this id (as a reconnect would).
func WithLastEventID(id string) RequestOption {
	return func(r *requestConfig) { r.lastEventID = id }
}
