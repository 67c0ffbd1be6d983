package aegis

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The event-stream parser on what the live route can send but a test cannot easily provoke
// (a dropped notice, a stream ending mid-way): heartbeats skipped, dropped counted, the
// reconnect carrying Last-Event-ID.
func TestStreamParsingAndResume(t *testing.T) {
	var mu sync.Mutex
	var lastEventIDs []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastEventIDs = append(lastEventIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastEventIDs)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprint(w, ": connected\n\n: heartbeat\n\nevent: dropped\ndata: {\"count\": 3}\n\n")
			fmt.Fprint(w, "id: dec_1\nevent: decision\ndata: {\"id\":\"dec_1\",\"action\":\"block\",\n")
			fmt.Fprint(w, "data: \"client_ip\":\"198.51.100.1\"}\n\n")
			return // the connection ends: the client resumes after dec_1
		}
		fmt.Fprint(w, "id: dec_2\r\nevent: decision\r\ndata: {\"id\":\"dec_2\",\"action\":\"log\"}\r\n\r\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer server.Close()
	c := NewClient(WithAPIKey("k"), WithBaseURL(server.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := c.ShieldLive.Stream(ctx, "site_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if !stream.Next() || stream.Current().ID != "dec_1" || stream.Current().ClientIP != "198.51.100.1" {
		t.Fatalf("first: %+v %v", stream.Current(), stream.Err())
	}
	if stream.Dropped() != 3 {
		t.Fatalf("dropped %d", stream.Dropped())
	}
	if !stream.Next() || stream.Current().ID != "dec_2" || stream.LastEventID() != "dec_2" {
		t.Fatalf("second: %+v %v", stream.Current(), stream.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lastEventIDs) != 2 || lastEventIDs[0] != "" || lastEventIDs[1] != "dec_1" {
		t.Fatalf("Last-Event-ID sent: %q", lastEventIDs)
	}
}
