// Command opampclient runs real opamp-go clients (the version test/peers/go.mod
// pins) against svc, scripted by a test: one JSON command per line on stdin,
// one JSON event per line on stdout (test/opamp/opamp-go.ts is its TypeScript
// side). Several agents can run in one process, each named by the test.
//
// What the protocol does is left to opamp-go: its WebSocket or HTTP client
// (chosen by the URL's scheme), its redials and backoff, its Retry-After
// handling, its sequence numbers, its coalescing of pending reports, and its
// handling of AgentIdentification.new_instance_uid (the client takes the new
// UID itself; the program only reports it). This program only does what an
// agent does around the library: it holds the description and the remote
// config status it is told to report, keeps them across a restart as the
// OpAMP supervisor persists them, and reports what the library's callbacks
// say.
//
// Commands (fields beyond op and agent as each needs):
//
//	start     url, token, uid (32 hex digits), description, heartbeatSeconds, autoApply
//	describe  description: SetAgentDescription
//	status    hash, status (APPLIED|APPLYING|FAILED), error: SetRemoteConfigStatus
//	stop      Stop (a WebSocket client sends agent_disconnect)
//	restart   [url]: stop, then start again with the kept state and the UID the
//	          server last gave it, as a restarted supervisor does
//
// Events: connected (OnConnect: a WebSocket upgrade, or an HTTP 200),
// connectFailed (OnConnectFailed), error (OnError: a ServerErrorResponse),
// message (OnMessage: every ServerToAgent processed, with its remote config
// or new instance UID when it has one), log (the library's own error log
// lines), stopped; and for each command, in order, ok or fault (it could not
// be carried out, and why).
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
)

// What the agents report they do: the supervisor's usual set without the
// capabilities that need more than a test scripts (effective config,
// packages, restart command, connection settings, own telemetry).
const capabilities = protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat

type description struct {
	Identifying    map[string]string `json:"identifying"`
	NonIdentifying map[string]string `json:"nonIdentifying"`
}

type command struct {
	Op               string       `json:"op"`
	Agent            string       `json:"agent"`
	URL              string       `json:"url"`
	Token            string       `json:"token"`
	UID              string       `json:"uid"`
	Description      *description `json:"description"`
	HeartbeatSeconds float64      `json:"heartbeatSeconds"`
	AutoApply        bool         `json:"autoApply"`
	Hash             string       `json:"hash"`
	Status           string       `json:"status"`
	Error            string       `json:"error"`
}

type remoteConfig struct {
	Hash string `json:"hash"`
	Body string `json:"body"`
}

type event struct {
	Agent          string        `json:"agent"`
	Event          string        `json:"event"`
	Error          string        `json:"error,omitempty"`
	ErrorType      string        `json:"errorType,omitempty"`
	RetryAfterNs   uint64        `json:"retryAfterNs,omitempty"`
	Flags          uint64        `json:"flags,omitempty"`
	RemoteConfig   *remoteConfig `json:"remoteConfig,omitempty"`
	NewInstanceUID string        `json:"newInstanceUid,omitempty"`
	Op             string        `json:"op,omitempty"`
}

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

func emit(e event) {
	outMu.Lock()
	defer outMu.Unlock()
	_ = out.Encode(e)
}

// logger forwards the library's error log lines as events; its debug lines are dropped.
type logger struct{ agent string }

func (l logger) Debugf(context.Context, string, ...interface{}) {}
func (l logger) Errorf(_ context.Context, format string, v ...interface{}) {
	emit(event{Agent: l.agent, Event: "log", Error: fmt.Sprintf(format, v...)})
}

// agent is one scripted agent: what it reports, kept across restarts, and its running client.
type agent struct {
	name string

	mu        sync.Mutex
	url       string
	token     string
	uid       types.InstanceUid
	descr     *protobufs.AgentDescription
	status    *protobufs.RemoteConfigStatus
	heartbeat time.Duration
	autoApply bool
	client    client.OpAMPClient
}

func attributes(m map[string]string) []*protobufs.KeyValue {
	kvs := make([]*protobufs.KeyValue, 0, len(m))
	for k, v := range m {
		kvs = append(kvs, &protobufs.KeyValue{Key: k, Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: v}}})
	}
	return kvs
}

func (d *description) proto() *protobufs.AgentDescription {
	return &protobufs.AgentDescription{IdentifyingAttributes: attributes(d.Identifying), NonIdentifyingAttributes: attributes(d.NonIdentifying)}
}

func statusOf(name string) (protobufs.RemoteConfigStatuses, error) {
	switch name {
	case "APPLIED":
		return protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED, nil
	case "APPLYING":
		return protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING, nil
	case "FAILED":
		return protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED, nil
	}
	return 0, fmt.Errorf("status %q is none of APPLIED, APPLYING, FAILED", name)
}

// start builds a client for the agent's transport and starts it with the state the agent holds.
func (a *agent) start() error {
	u, err := url.Parse(a.url)
	if err != nil {
		return err
	}
	log := logger{a.name}
	var c client.OpAMPClient
	switch u.Scheme {
	case "ws", "wss":
		c = client.NewWebSocket(log)
	case "http", "https":
		c = client.NewHTTP(log)
	default:
		return fmt.Errorf("url %q: the scheme picks the transport and must be ws, wss, http or https", a.url)
	}
	// Health first: SetCapabilities refuses ReportsHealth without it.
	if err := c.SetHealth(&protobufs.ComponentHealth{Healthy: true, StartTimeUnixNano: uint64(time.Now().UnixNano())}); err != nil {
		return err
	}
	caps := capabilities
	if err := c.SetCapabilities(&caps); err != nil {
		return err
	}
	if err := c.SetAgentDescription(a.descr); err != nil {
		return err
	}
	settings := types.StartSettings{
		OpAMPServerURL:     a.url,
		Header:             http.Header{"Authorization": {"Bearer " + a.token}},
		InstanceUid:        a.uid,
		RemoteConfigStatus: a.status,
		Callbacks: types.Callbacks{
			OnConnect: func(context.Context) { emit(event{Agent: a.name, Event: "connected"}) },
			OnConnectFailed: func(_ context.Context, err error) {
				emit(event{Agent: a.name, Event: "connectFailed", Error: err.Error()})
			},
			OnError: func(_ context.Context, e *protobufs.ServerErrorResponse) {
				ev := event{Agent: a.name, Event: "error", Error: e.ErrorMessage, ErrorType: e.Type.String()}
				if info := e.GetRetryInfo(); info != nil {
					ev.RetryAfterNs = info.RetryAfterNanoseconds
				}
				emit(ev)
			},
			OnMessage: func(ctx context.Context, m *types.MessageData) { a.onMessage(ctx, m) },
		},
	}
	if a.heartbeat > 0 {
		settings.HeartbeatInterval = &a.heartbeat
	}
	// Set before Start: its callbacks may run before Start returns.
	a.mu.Lock()
	a.client = c
	a.mu.Unlock()
	if err := c.Start(context.Background(), settings); err != nil {
		a.mu.Lock()
		a.client = nil
		a.mu.Unlock()
		return err
	}
	return nil
}

// onMessage reports what opamp-go handed over; the library has already taken a new instance UID itself.
func (a *agent) onMessage(_ context.Context, m *types.MessageData) {
	ev := event{Agent: a.name, Event: "message"}
	if m.RemoteConfig != nil {
		rc := remoteConfig{Hash: hex.EncodeToString(m.RemoteConfig.ConfigHash)}
		if file := m.RemoteConfig.GetConfig().GetConfigMap()[""]; file != nil {
			rc.Body = string(file.Body)
		}
		ev.RemoteConfig = &rc
	}
	if m.AgentIdentification != nil {
		a.mu.Lock()
		copy(a.uid[:], m.AgentIdentification.NewInstanceUid)
		a.mu.Unlock()
		ev.NewInstanceUID = hex.EncodeToString(m.AgentIdentification.NewInstanceUid)
	}
	emit(ev)
	if m.RemoteConfig != nil && a.autoApply {
		// An agent that runs whatever it is given: it says so at once.
		applied := &protobufs.RemoteConfigStatus{LastRemoteConfigHash: m.RemoteConfig.ConfigHash, Status: protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED}
		if err := a.setStatus(applied); err != nil {
			emit(event{Agent: a.name, Event: "log", Error: "SetRemoteConfigStatus: " + err.Error()})
		}
	}
}

// setStatus keeps the status (a restart starts with it) and hands it to the running client.
func (a *agent) setStatus(status *protobufs.RemoteConfigStatus) error {
	a.mu.Lock()
	a.status = status
	c := a.client
	a.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.SetRemoteConfigStatus(status)
}

func (a *agent) stop() error {
	a.mu.Lock()
	c := a.client
	a.client = nil
	a.mu.Unlock()
	if c == nil {
		return errors.New("not running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Stop(ctx)
}

func run(agents map[string]*agent, cmd command) error {
	a := agents[cmd.Agent]
	if cmd.Op == "start" {
		if a != nil {
			return errors.New("already started; restart keeps its state")
		}
		uid, err := hex.DecodeString(cmd.UID)
		if err != nil || len(uid) != 16 {
			return fmt.Errorf("uid %q is not 32 hex digits", cmd.UID)
		}
		if cmd.Description == nil {
			return errors.New("start needs a description (opamp-go refuses to start without one)")
		}
		a = &agent{name: cmd.Agent, url: cmd.URL, token: cmd.Token, descr: cmd.Description.proto(),
			heartbeat: time.Duration(cmd.HeartbeatSeconds * float64(time.Second)), autoApply: cmd.AutoApply}
		copy(a.uid[:], uid)
		if err := a.start(); err != nil {
			return err
		}
		agents[cmd.Agent] = a
		return nil
	}
	if a == nil {
		return errors.New("no such agent")
	}
	switch cmd.Op {
	case "describe":
		if cmd.Description == nil {
			return errors.New("describe needs a description")
		}
		descr := cmd.Description.proto()
		a.mu.Lock()
		a.descr = descr
		c := a.client
		a.mu.Unlock()
		if c != nil {
			return c.SetAgentDescription(descr)
		}
		return nil
	case "status":
		hash, err := hex.DecodeString(cmd.Hash)
		if err != nil {
			return fmt.Errorf("hash %q is not hex", cmd.Hash)
		}
		status, err := statusOf(cmd.Status)
		if err != nil {
			return err
		}
		return a.setStatus(&protobufs.RemoteConfigStatus{LastRemoteConfigHash: hash, Status: status, ErrorMessage: cmd.Error})
	case "stop":
		if err := a.stop(); err != nil {
			return err
		}
		emit(event{Agent: a.name, Event: "stopped"})
		return nil
	case "restart":
		if err := a.stop(); err != nil {
			return err
		}
		emit(event{Agent: a.name, Event: "stopped"})
		if cmd.URL != "" {
			a.url = cmd.URL
		}
		return a.start()
	}
	return fmt.Errorf("unknown op %q", cmd.Op)
}

func main() {
	agents := map[string]*agent{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var cmd command
		if err := json.Unmarshal([]byte(line), &cmd); err != nil {
			emit(event{Event: "fault", Error: "bad command: " + err.Error()})
			continue
		}
		if err := run(agents, cmd); err != nil {
			emit(event{Agent: cmd.Agent, Event: "fault", Op: cmd.Op, Error: err.Error()})
		} else {
			emit(event{Agent: cmd.Agent, Event: "ok", Op: cmd.Op})
		}
	}
	// Stdin closed: the test is done with every agent.
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.stop() }()
	}
	wg.Wait()
}
