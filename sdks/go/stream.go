package aegis

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StreamEvent is one server-sent event as received.
type StreamEvent struct {
	// ID is the event's id (a decision id for decisions), sent back as Last-Event-ID on reconnect.
	ID string
	// Event is the event type: "decision", "dropped", …
	Event string
	// Data is the event's data (JSON for decisions).
	Data []byte
}

// Stream reads a server-sent event stream of T (the live decisions of a Shield site). When the
// connection breaks it reconnects with Last-Event-ID set to the last event seen, so no stored
// event is missed.
//
//	stream, err := client.ShieldLive.Stream(ctx, siteID, nil)
//	if err != nil { … }
//	defer stream.Close()
//	for stream.Next() {
//		decision := stream.Current()
//		…
//	}
//	if err := stream.Err(); err != nil { … }
type Stream[T any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	client *Client
	req    *apiRequest
	opts   []RequestOption

	mu      sync.Mutex
	body    io.ReadCloser
	reader  *bufio.Reader
	closed  bool
	current T
	event   StreamEvent
	lastID  string
	dropped int64
	err     error

	reconnects int
}

// maxStreamReconnects bounds reconnecting without receiving an event in between.
const maxStreamReconnects = 5

func openStream[T any](ctx context.Context, c *Client, req *apiRequest, opts []RequestOption) (*Stream[T], error) {
	streamCtx, cancel := context.WithCancel(ctx)
	req.accept = "text/event-stream"
	req.stream = true
	s := &Stream[T]{ctx: streamCtx, cancel: cancel, client: c, req: req, opts: opts}
	for _, opt := range opts {
		var cfg requestConfig
		opt(&cfg)
		if cfg.lastEventID != "" {
			s.lastID = cfg.lastEventID
		}
	}
	if err := s.connect(); err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

func (s *Stream[T]) connect() error {
	opts := s.opts
	if s.lastID != "" {
		opts = append(append([]RequestOption(nil), opts...), WithLastEventID(s.lastID))
	}
	resp, release, err := s.client.send(s.ctx, s.req, opts)
	if err != nil {
		return err
	}
	body := &releasingBody{ReadCloser: resp.Body, release: release}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		body.Close()
		return nil
	}
	s.body = body
	s.reader = bufio.NewReaderSize(body, 64<<10)
	return nil
}

// Next waits for the next decision; false once the stream is closed or failed (see Err). Events
// of other types are not returned: `dropped` (the server skipped events for a slow reader) adds
// to Dropped.
func (s *Stream[T]) Next() bool {
	for {
		if s.isClosed() || s.err != nil {
			return false
		}
		ev, err := s.readEvent()
		if err != nil {
			if s.isClosed() {
				return false
			}
			if s.ctx.Err() != nil {
				s.err = s.ctx.Err()
				return false
			}
			// The connection broke or the server ended the stream: resume after the last event,
			// waiting a little more each time the stream ends without delivering anything.
			s.closeBody()
			s.reconnects++
			if s.reconnects > maxStreamReconnects {
				s.err = &ConnectionError{Err: errors.New("the live stream kept ending: " + err.Error())}
				return false
			}
			if s.reconnects > 1 {
				timer := time.NewTimer(backoff(s.reconnects - 2))
				select {
				case <-s.ctx.Done():
					timer.Stop()
					if !s.isClosed() {
						s.err = s.ctx.Err()
					}
					return false
				case <-timer.C:
				}
			}
			if err := s.connect(); err != nil {
				if !s.isClosed() {
					s.err = err
				}
				return false
			}
			continue
		}
		s.reconnects = 0
		if ev.ID != "" {
			s.lastID = ev.ID
		}
		s.event = ev
		switch ev.Event {
		case "dropped":
			var info struct {
				Count int64 `json:"count"`
			}
			if json.Unmarshal(ev.Data, &info) == nil {
				s.dropped += info.Count
			}
			continue
		case "", "decision":
			var value T
			if err := json.Unmarshal(ev.Data, &value); err != nil {
				s.err = errors.New("aegis: decoding a stream event: " + err.Error())
				return false
			}
			s.current = value
			return true
		default:
			continue
		}
	}
}

// readEvent reads lines up to the blank line that ends an event; comments (heartbeats) and
// events without data are skipped.
func (s *Stream[T]) readEvent() (StreamEvent, error) {
	var ev StreamEvent
	var data []string
	hasData := false
	for {
		line, err := s.reader.ReadString('\n')
		if err != nil {
			return StreamEvent{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if hasData {
				ev.Data = []byte(strings.Join(data, "\n"))
				return ev, nil
			}
			ev = StreamEvent{}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Event = value
		case "data":
			data = append(data, value)
			hasData = true
		case "retry":
			_, _ = strconv.Atoi(value)
		}
	}
}

// Current is the decision Next moved to.
func (s *Stream[T]) Current() T { return s.current }

// Event is the raw event Next last read.
func (s *Stream[T]) Event() StreamEvent { return s.event }

// LastEventID is the id of the last event received (where a reconnect resumes).
func (s *Stream[T]) LastEventID() string { return s.lastID }

// Dropped is how many events the server reported skipping because this reader was too slow.
func (s *Stream[T]) Dropped() int64 { return s.dropped }

// Err is the error that ended the stream, if any (nil after Close).
func (s *Stream[T]) Err() error { return s.err }

// Close ends the stream; a Next blocked in another goroutine returns false.
func (s *Stream[T]) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.closeBody()
	return nil
}

func (s *Stream[T]) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Stream[T]) closeBody() {
	s.mu.Lock()
	body := s.body
	s.body = nil
	s.mu.Unlock()
	if body != nil {
		body.Close()
	}
}

// releasingBody ends the attempt's context when the stream's body is closed.
type releasingBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
