// Package aegis is the Go client of the Aegis API: Shield sites and their rules, scans,
// vulnerabilities, webhooks and the rest of /api/v1.
//
// The services (client.ShieldSites, client.IPAccessRules, …) and models are generated from the
// API's OpenAPI document (zz_generated_*.go); this package's hand-written files do the HTTP:
// authentication, retries with backoff, idempotency keys, pagination, errors, the live decision
// stream and webhook signature verification.
package aegis

import (
	"net/http"
	"os"
	"strings"
	"time"
)

// Version of this SDK, sent in the User-Agent header.
const Version = "0.1.0"

const (
	// DefaultBaseURL is used when neither WithBaseURL nor AEGIS_API_URL names the server.
	DefaultBaseURL = "http://localhost:3000"
	// DefaultMaxRetries is how many times a failed request is retried by default.
	DefaultMaxRetries = 2
	// DefaultTimeout bounds each attempt of a request (connecting, sending, reading the answer).
	DefaultTimeout = 60 * time.Second
)

// Client calls the Aegis API. Create it with NewClient; it is safe for concurrent use.
type Client struct {
	services

	apiKey     string
	baseURL    string
	maxRetries int
	timeout    time.Duration
	httpClient *http.Client
	headers    http.Header
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sets the API key (default: the AEGIS_API_KEY environment variable).
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithBaseURL sets the server's URL (default: AEGIS_API_URL, else http://localhost:3000).
func WithBaseURL(url string) Option { return func(c *Client) { c.baseURL = url } }

// WithMaxRetries sets how many times a request is retried after a 429, 502, 503, 504, a
// connection error or a timeout (default 2; 0 disables retries).
func WithMaxRetries(n int) Option {
	return func(c *Client) {
		if n < 0 {
			n = 0
		}
		c.maxRetries = n
	}
}

// WithTimeout bounds each attempt of a request (default 60 s). For the live stream it bounds
// connecting and receiving the answer's headers only.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithHTTPClient sets the http.Client that sends the requests (its own Timeout should be unset:
// the SDK applies its timeout per attempt).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithHeader adds a header sent with every request.
func WithHeader(name, value string) Option {
	return func(c *Client) { c.headers.Add(name, value) }
}

// NewClient returns a client configured by opts, then by the environment (AEGIS_API_KEY,
// AEGIS_API_URL), then by the defaults.
func NewClient(opts ...Option) *Client {
	c := &Client{
		apiKey:     os.Getenv("AEGIS_API_KEY"),
		baseURL:    os.Getenv("AEGIS_API_URL"),
		maxRetries: DefaultMaxRetries,
		timeout:    DefaultTimeout,
		httpClient: defaultHTTPClient,
		headers:    http.Header{},
	}
	for _, opt := range opts {
		opt(c)
	}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	c.baseURL = strings.TrimRight(c.baseURL, "/")
	c.services.init(c)
	return c
}

// BaseURL is the server the client calls.
func (c *Client) BaseURL() string { return c.baseURL }

// The default transport keeps more idle connections per host than net/http's (2), so paging and
// concurrent calls reuse connections.
var defaultHTTPClient = &http.Client{Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}()}

// String returns a pointer to v, for optional fields.
func String(v string) *string { return &v }

// Int64 returns a pointer to v, for optional fields.
func Int64(v int64) *int64 { return &v }

// Bool returns a pointer to v, for optional fields.
func Bool(v bool) *bool { return &v }

// Float64 returns a pointer to v, for optional fields.
func Float64(v float64) *float64 { return &v }

// Ptr returns a pointer to v (enums and other optional fields).
func Ptr[T any](v T) *T { return &v }
