package aegis

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// apiRequest describes one call; generated methods fill it in.
type apiRequest struct {
	method      string
	path        string
	query       url.Values
	jsonBody    any
	rawBody     io.Reader
	contentType string
	accept      string
	// stream: the timeout covers the answer's headers only, not its (endless) body.
	stream bool
}

const (
	backoffBase   = 500 * time.Millisecond
	backoffCap    = 8 * time.Second
	retryAfterCap = 60 * time.Second
)

func pathEscape(s string) string { return url.PathEscape(s) }

// optionalBody keeps a nil pointer from becoming a non-nil interface (which would send "null").
func optionalBody[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

func newIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a time-based key still avoids reuse.
		return fmt.Sprintf("go-%d", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// call sends req (with retries) and decodes a JSON answer into out (unless out is nil).
func (c *Client) call(ctx context.Context, req *apiRequest, opts []RequestOption, out any) error {
	resp, stop, err := c.send(ctx, req, opts)
	if err != nil {
		return err
	}
	defer stop()
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.transportError(ctx, err, stop)
	}
	if len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("aegis: decoding the answer of %s %s: %w", req.method, req.path, err)
	}
	return nil
}

// send performs req with retries and returns a 2xx answer whose body the caller must read and
// close, then call stop (which ends the attempt's timeout). Error answers become *Error.
func (c *Client) send(ctx context.Context, req *apiRequest, opts []RequestOption) (*http.Response, func(), error) {
	cfg := requestConfig{timeout: c.timeout}
	for _, opt := range opts {
		opt(&cfg)
	}
	maxRetries := c.maxRetries
	if cfg.maxRetries != nil {
		maxRetries = *cfg.maxRetries
	}
	mutating := req.method != http.MethodGet && req.method != http.MethodHead
	if mutating && cfg.idempotencyKey == "" {
		// One key for every attempt: a retry of a request the server did run returns its answer.
		cfg.idempotencyKey = newIdempotencyKey()
	}

	var body []byte
	contentType := req.contentType
	switch {
	case req.rawBody != nil:
		data, err := io.ReadAll(req.rawBody)
		if err != nil {
			return nil, nil, fmt.Errorf("aegis: reading the request body: %w", err)
		}
		body = data
		if contentType == "" {
			contentType = "application/octet-stream"
		}
	case req.jsonBody != nil:
		data, err := json.Marshal(req.jsonBody)
		if err != nil {
			return nil, nil, fmt.Errorf("aegis: encoding the request body: %w", err)
		}
		body = data
		contentType = "application/json"
	}

	target := c.baseURL + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}

	for attempt := 0; ; attempt++ {
		resp, stop, err := c.attempt(ctx, req, &cfg, target, body, contentType)
		if err == nil && resp.StatusCode < 300 {
			return resp, stop, nil
		}
		var wait time.Duration
		var retryable bool
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			retryable = IsConnection(err) || IsTimeout(err)
		} else {
			retryable = resp.StatusCode == 429 || resp.StatusCode == 502 || resp.StatusCode == 503 || resp.StatusCode == 504
			wait = retryAfter(resp.Header.Get("Retry-After"))
			apiErr := readError(resp)
			stop()
			err = apiErr
		}
		if !retryable || attempt >= maxRetries {
			return nil, nil, err
		}
		if wait <= 0 {
			wait = backoff(attempt)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// attempt sends one HTTP request. The timeout covers everything until stop is called, so it
// also bounds reading the body; the live stream calls stop once the headers are in.
func (c *Client) attempt(ctx context.Context, req *apiRequest, cfg *requestConfig, target string, body []byte, contentType string) (*http.Response, func(), error) {
	attemptCtx, cancel := context.WithCancel(ctx)
	var timedOut int32
	var timer *time.Timer
	if cfg.timeout > 0 {
		timer = time.AfterFunc(cfg.timeout, func() {
			atomic.StoreInt32(&timedOut, 1)
			cancel()
		})
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	httpReq, err := http.NewRequestWithContext(attemptCtx, req.method, target, reader)
	if err != nil {
		stop()
		cancel()
		return nil, nil, fmt.Errorf("aegis: building the request: %w", err)
	}
	for name, values := range c.headers {
		httpReq.Header[name] = append([]string(nil), values...)
	}
	if c.apiKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	httpReq.Header.Set("User-Agent", "aegis-go/"+Version)
	accept := req.accept
	if accept == "" {
		accept = "application/json"
	}
	httpReq.Header.Set("Accept", accept)
	if contentType != "" {
		httpReq.Header.Set("Content-Type", contentType)
	}
	if cfg.idempotencyKey != "" {
		httpReq.Header.Set("Idempotency-Key", cfg.idempotencyKey)
	}
	if cfg.requestID != "" {
		httpReq.Header.Set("X-Request-Id", cfg.requestID)
	}
	if cfg.lastEventID != "" {
		httpReq.Header.Set("Last-Event-ID", cfg.lastEventID)
	}
	for name, values := range cfg.headers {
		httpReq.Header[name] = append([]string(nil), values...)
	}
	resp, err := c.httpClient.Do(httpReq)
	if err != nil {
		stop()
		cancel()
		if atomic.LoadInt32(&timedOut) == 1 {
			return nil, nil, &TimeoutError{Err: err}
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, &ConnectionError{Err: err}
	}
	if req.stream {
		stop()
	}
	done := func() {
		stop()
		// Cancelling after the body is read releases the context; the connection is reused.
		cancel()
	}
	return resp, done, nil
}

// transportError classifies an error met while reading an answer's body.
func (c *Client) transportError(ctx context.Context, err error, _ func()) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &TimeoutError{Err: err}
	}
	return &ConnectionError{Err: err}
}

// readError turns an error answer into *Error (its body is read and closed).
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	apiErr := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"), Header: resp.Header, Body: data}
	var envelope struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &envelope) == nil && envelope.Error.Code != "" {
		apiErr.Code = envelope.Error.Code
		apiErr.Message = envelope.Error.Message
		apiErr.Details = envelope.Error.Details
	} else {
		apiErr.Code = "http_" + strconv.Itoa(resp.StatusCode)
		apiErr.Message = http.StatusText(resp.StatusCode)
	}
	return apiErr
}

// retryAfter parses Retry-After (seconds or an HTTP date); 0 when absent or unparsable.
func retryAfter(value string) time.Duration {
	if value == "" {
		return 0
	}
	var wait time.Duration
	if seconds, err := strconv.ParseFloat(value, 64); err == nil {
		wait = time.Duration(seconds * float64(time.Second))
	} else if at, err := http.ParseTime(value); err == nil {
		wait = time.Until(at)
	}
	if wait < 0 {
		return 0
	}
	if wait > retryAfterCap {
		wait = retryAfterCap
	}
	return wait
}

// backoff is 0.5 s × 2^attempt, capped at 8 s, with "equal jitter" (half fixed, half random) so
// clients that failed together do not retry together.
func backoff(attempt int) time.Duration {
	d := time.Duration(float64(backoffBase) * math.Pow(2, float64(attempt)))
	if d > backoffCap || d <= 0 {
		d = backoffCap
	}
	half := d / 2
	jitterMu.Lock()
	defer jitterMu.Unlock()
	return half + time.Duration(jitter.Int63n(int64(half)+1))
}

var (
	jitterMu sync.Mutex
	jitter   = mathrand.New(mathrand.NewSource(time.Now().UnixNano()))
)
