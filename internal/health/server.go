package health

import (
	"net/http"
	"time"
)

// Timeouts bound how long a client may hold a connection of a server of ours. Without them an
// idle keep-alive connection or a body dripped a byte at a time stays open for good, and a few
// hundred of them exhaust the process's descriptors.
type Timeouts struct {
	ReadHeader time.Duration // to read a request's headers
	Read       time.Duration // to read a whole request, body included
	Write      time.Duration // from the end of the headers to the end of the answer
	Idle       time.Duration // a keep-alive connection waiting for its next request
}

// DefaultTimeouts are those of every HTTP server the programs run: the probes and metrics, and
// Slack's interaction endpoint (Slack itself gives up on an answer after 3 s).
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
	Idle: 60 * time.Second}

// maxHeaderBytes bounds a request's headers; bodies are bounded by the handlers that read them.
const maxHeaderBytes = 64 << 10

// NewServer is an HTTP server for h with the timeouts t. Every server of the programs is made
// here, so none is left without them.
func NewServer(h http.Handler, t Timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write,
		IdleTimeout: t.Idle, MaxHeaderBytes: maxHeaderBytes}
}
