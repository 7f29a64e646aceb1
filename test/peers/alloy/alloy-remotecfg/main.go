// The remote-config client of Grafana Alloy v1.18.1, its remotecfg service
// (internal/service/remotecfg: remotecfg.go, config_manager.go, api_client.go,
// arguments.go) carried over call for call, on Grafana's generated Connect
// client (github.com/grafana/alloy-remote-config) and connect-go at the
// versions Alloy v1.18.1 pins, its HTTP client built by prometheus/common as
// Alloy builds it, and its arguments decoded from an Alloy config file's
// `remotecfg` block by Alloy's syntax module. Alloy itself cannot be built
// from the module proxy (README "Tests"), so this stands in for it.
//
// A script drives it instead of Alloy's ticker: each line of stdin is one
// step, answered by one JSON line on stdout naming every call it made:
//
//	start   Alloy's start: the initial load evaluates the block (Update:
//	        RegisterCollector), then the service runs (a fetch that falls back to
//	        the on-disk cache, then RegisterCollector again). A failed initial
//	        load ends Alloy, a failed Run the service: either ends this program.
//	poll    one tick of the poll loop (a fetch, no cache fallback)
//	reload  Alloy's config reload: the file read again (Update: a new client when
//	        the url or the HTTP client settings changed, RegisterCollector, a
//	        fetch that falls back to the cache)
//	stop    shutdown: UnregisterCollector
//
// Loading a fetched config is alloycheck (Alloy's components are not
// buildable here): APPLIED means Alloy's parser and evaluator took it, FAILED
// carries their diagnostics.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"

	"connectrpc.com/connect"
	collectorv1 "github.com/grafana/alloy-remote-config/api/gen/proto/go/collector/v1"
	"github.com/grafana/alloy-remote-config/api/gen/proto/go/collector/v1/collectorv1connect"
	"github.com/grafana/alloy/syntax"
	"github.com/grafana/alloy/syntax/alloytypes"
	"github.com/grafana/alloy/syntax/ast"
	"github.com/grafana/alloy/syntax/diag"
	"github.com/grafana/alloy/syntax/parser"
	"github.com/grafana/alloy/syntax/vm"
	commonconfig "github.com/prometheus/common/config"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"svc/test/peers/alloy/alloycheck"
)

// The release whose client this is: its build.Version, in the collector.version attribute and the User-Agent.
const alloyVersion = "v1.18.1"

var errNotModified = errors.New("config not modified since last fetch")

// ---- arguments.go ----

// arguments is remotecfg.Arguments with the members of the squashed
// config.HTTPClientConfig that carry credentials (internal/component/common/config/types.go).
type arguments struct {
	URL             string            `alloy:"url,attr,optional"`
	ID              string            `alloy:"id,attr,optional"`
	Name            string            `alloy:"name,attr,optional"`
	Attributes      map[string]string `alloy:"attributes,attr,optional"`
	PollFrequency   time.Duration     `alloy:"poll_frequency,attr,optional"`
	BearerToken     alloytypes.Secret `alloy:"bearer_token,attr,optional"`
	BearerTokenFile string            `alloy:"bearer_token_file,attr,optional"`
	BasicAuth       *basicAuth        `alloy:"basic_auth,block,optional"`
	Authorization   *authorization    `alloy:"authorization,block,optional"`
	FollowRedirects bool              `alloy:"follow_redirects,attr,optional"`
	EnableHTTP2     bool              `alloy:"enable_http2,attr,optional"`
}

type basicAuth struct {
	Username     string            `alloy:"username,attr,optional"`
	Password     alloytypes.Secret `alloy:"password,attr,optional"`
	PasswordFile string            `alloy:"password_file,attr,optional"`
}

type authorization struct {
	Type            string            `alloy:"type,attr,optional"`
	Credentials     alloytypes.Secret `alloy:"credentials,attr,optional"`
	CredentialsFile string            `alloy:"credentials_file,attr,optional"`
}

// SetToDefault: getDefaultArguments and DefaultHTTPClientConfig (the id's default, a seed UID, is left empty).
func (a *arguments) SetToDefault() {
	*a = arguments{Attributes: map[string]string{}, PollFrequency: time.Minute, FollowRedirects: true, EnableHTTP2: true}
}

func (a *arguments) Validate() error {
	if a.PollFrequency < 10*time.Second {
		return fmt.Errorf("poll_frequency must be at least \"10s\", got %q", a.PollFrequency)
	}
	for k := range a.Attributes {
		if strings.HasPrefix(k, "collector.") {
			return fmt.Errorf("%q is a reserved namespace for remotecfg attribute keys", "collector")
		}
	}
	auth := 0
	for _, set := range []bool{a.BasicAuth != nil, a.Authorization != nil, a.BearerToken != "", a.BearerTokenFile != ""} {
		if set {
			auth++
		}
	}
	if auth > 1 {
		return fmt.Errorf("at most one of basic_auth, authorization, oauth2, bearer_token & bearer_token_file must be configured")
	}
	return nil
}

func (a *arguments) hash() (string, error) {
	b, err := syntax.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("failed to marshal arguments: %w", err)
	}
	return getHash(b), nil
}

// httpClientConfig is HTTPClientConfig.Convert.
func (a *arguments) httpClientConfig() commonconfig.HTTPClientConfig {
	c := commonconfig.HTTPClientConfig{
		BearerToken:     commonconfig.Secret(a.BearerToken),
		BearerTokenFile: a.BearerTokenFile,
		FollowRedirects: a.FollowRedirects,
		EnableHTTP2:     a.EnableHTTP2,
	}
	if a.BasicAuth != nil {
		c.BasicAuth = &commonconfig.BasicAuth{Username: a.BasicAuth.Username, Password: commonconfig.Secret(a.BasicAuth.Password), PasswordFile: a.BasicAuth.PasswordFile}
	}
	if a.Authorization != nil {
		c.Authorization = &commonconfig.Authorization{Type: a.Authorization.Type, Credentials: commonconfig.Secret(a.Authorization.Credentials), CredentialsFile: a.Authorization.CredentialsFile}
	}
	return c
}

// readArguments evaluates the config file's `remotecfg` block as Alloy's loader evaluates a service block.
func readArguments(path string) (arguments, error) {
	var args arguments
	src, err := os.ReadFile(path)
	if err != nil {
		return args, err
	}
	file, err := parser.ParseFile(path, src)
	if err != nil {
		return args, err
	}
	for _, stmt := range file.Body {
		if block, ok := stmt.(*ast.BlockStmt); ok && strings.Join(block.Name, ".") == "remotecfg" && block.Label == "" {
			err := vm.New(block).Evaluate(vm.NewScope(nil), &args)
			return args, err
		}
	}
	// No block: the service keeps its defaults, an empty url, and stays off.
	args.SetToDefault()
	return args, nil
}

// ---- api_client.go ----

type apiClient struct {
	client collectorv1connect.CollectorServiceClient
}

func newAPIClient(args arguments, rec *recorder) (*apiClient, error) {
	httpClient, err := commonconfig.NewClientFromConfig(args.httpClientConfig(), "remoteconfig")
	if err != nil {
		return nil, err
	}
	agent := connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("User-Agent", fmt.Sprintf("Alloy/%s (%s; deb)", alloyVersion, runtime.GOOS))
			return next(ctx, req)
		}
	})
	return &apiClient{collectorv1connect.NewCollectorServiceClient(httpClient, args.URL, connect.WithInterceptors(agent, rec))}, nil
}

func (c *apiClient) getConfig(ctx context.Context, req *collectorv1.GetConfigRequest) (*collectorv1.GetConfigResponse, error) {
	resp, err := c.client.GetConfig(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, err
	}
	if resp.Msg.NotModified {
		return nil, errNotModified
	}
	return resp.Msg, nil
}

// ---- config_manager.go ----

type configManager struct {
	remotecfgPath string
	configPath    string
	argsHash      string

	lastLoadedConfigHash   string
	lastReceivedConfigHash string
	remoteHash             string

	remoteConfigStatus      *collectorv1.RemoteConfigStatus
	lastSentConfigStatus    *collectorv1.RemoteConfigStatus
	effectiveConfig         *collectorv1.EffectiveConfig
	lastSentEffectiveConfig *collectorv1.EffectiveConfig

	// running is the config loaded now (shown to the test, not sent).
	running []byte
	log     *[]string
}

func newConfigManager(remotecfgPath, configPath string, log *[]string) *configManager {
	return &configManager{
		remotecfgPath:      remotecfgPath,
		configPath:         configPath,
		remoteConfigStatus: &collectorv1.RemoteConfigStatus{Status: collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_UNSET},
		log:                log,
	}
}

func (cm *configManager) logf(format string, a ...any) {
	*cm.log = append(*cm.log, fmt.Sprintf(format, a...))
}

func (cm *configManager) cachedConfigPath() string {
	return filepath.Join(cm.remotecfgPath, cm.argsHash)
}

func (cm *configManager) parseAndLoad(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := alloycheck.Check(cm.configPath, b); err != nil {
		cm.logf("failed to parse and load configuration: %v", err)
		return err
	}
	cm.running = b
	cm.setEffectiveConfig(b)
	return nil
}

func (cm *configManager) fetchLoadConfig(get func() (*collectorv1.GetConfigResponse, error), useCacheAsFallback bool) {
	if err := cm.fetchLoadRemoteConfig(get); err != nil && err != errNotModified {
		if useCacheAsFallback {
			cm.logf("failed to fetch remote config, falling back to cache: %v", err)
			cm.fetchLoadLocalConfig()
		} else {
			cm.logf("failed to fetch remote config, continuing with current config: %v", err)
		}
	}
	cm.notifyStatusUpdate(get)
}

func (cm *configManager) notifyStatusUpdate(get func() (*collectorv1.GetConfigResponse, error)) {
	if !cm.hasPendingUpdates() {
		return
	}
	if _, err := get(); err != nil && err != errNotModified {
		cm.logf("status notification call failed, will retry on next poll: %v", err)
	}
}

func (cm *configManager) fetchLoadRemoteConfig(get func() (*collectorv1.GetConfigResponse, error)) error {
	gcr, err := get()
	if err == errNotModified {
		// APPLIED only when the last received config is the one loaded (not a bad one served again).
		if cm.lastLoadedConfigHash != "" && cm.lastReceivedConfigHash != "" && cm.lastLoadedConfigHash == cm.lastReceivedConfigHash {
			cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED, "")
		}
		return nil
	}
	if err != nil {
		cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_FAILED, getErrorMessage(err))
		return err
	}
	if gcr.Hash != "" {
		cm.remoteHash = gcr.Hash
	}
	b := []byte(gcr.GetContent())
	newConfigHash := getHash(b)
	if cm.lastReceivedConfigHash == newConfigHash {
		return nil
	}
	alreadyLoaded := cm.lastLoadedConfigHash == newConfigHash
	cm.lastReceivedConfigHash = newConfigHash
	if alreadyLoaded {
		cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED, "")
		return nil
	}
	cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_APPLYING, "")
	if err := cm.parseAndLoad(b); err != nil {
		cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_FAILED, getErrorMessage(err))
		// Back to the cached config, so no partial config is left running.
		if cm.lastLoadedConfigHash != "" {
			cached, err := os.ReadFile(cm.cachedConfigPath())
			if err != nil {
				return err
			}
			return cm.parseAndLoad(cached)
		}
		return err
	}
	cm.lastLoadedConfigHash = newConfigHash
	cm.setRemoteConfigStatus(collectorv1.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED, "")
	if err := os.WriteFile(cm.cachedConfigPath(), b, 0o750); err != nil {
		cm.logf("failed to flush remote configuration contents the on-disk cache: %v", err)
	}
	return nil
}

func (cm *configManager) fetchLoadLocalConfig() {
	b, err := os.ReadFile(cm.cachedConfigPath())
	if err != nil {
		cm.logf("failed to read from cache: %v", err)
		return
	}
	if err := cm.parseAndLoad(b); err != nil {
		cm.logf("failed to load from cache: %v", err)
		return
	}
	cm.lastLoadedConfigHash = getHash(b)
}

func (cm *configManager) setRemoteConfigStatus(status collectorv1.RemoteConfigStatuses, message string) {
	cm.remoteConfigStatus = &collectorv1.RemoteConfigStatus{Status: status, ErrorMessage: message}
}

func (cm *configManager) statusPending() bool {
	return cm.lastSentConfigStatus == nil ||
		cm.remoteConfigStatus.Status != cm.lastSentConfigStatus.Status ||
		cm.remoteConfigStatus.ErrorMessage != cm.lastSentConfigStatus.ErrorMessage
}

// getRemoteConfigStatusForRequest: the status when never sent or changed, else nil.
func (cm *configManager) getRemoteConfigStatusForRequest() *collectorv1.RemoteConfigStatus {
	if !cm.statusPending() {
		return nil
	}
	cm.lastSentConfigStatus = proto.Clone(cm.remoteConfigStatus).(*collectorv1.RemoteConfigStatus)
	return proto.Clone(cm.remoteConfigStatus).(*collectorv1.RemoteConfigStatus)
}

func (cm *configManager) setEffectiveConfig(config []byte) {
	cm.effectiveConfig = &collectorv1.EffectiveConfig{ConfigMap: &collectorv1.AgentConfigMap{ConfigMap: map[string]*collectorv1.AgentConfigFile{
		"": {Body: config, ContentType: "text/plain"},
	}}}
}

// getEffectiveConfigForRequest: the effective config when set and changed since last sent, else nil.
func (cm *configManager) getEffectiveConfigForRequest() *collectorv1.EffectiveConfig {
	if cm.effectiveConfig == nil || proto.Equal(cm.effectiveConfig, cm.lastSentEffectiveConfig) {
		return nil
	}
	cm.lastSentEffectiveConfig = proto.Clone(cm.effectiveConfig).(*collectorv1.EffectiveConfig)
	return proto.Clone(cm.effectiveConfig).(*collectorv1.EffectiveConfig)
}

func (cm *configManager) hasPendingUpdates() bool {
	return cm.statusPending() || (cm.effectiveConfig != nil && !proto.Equal(cm.effectiveConfig, cm.lastSentEffectiveConfig))
}

// getErrorMessage: every diagnostic for Alloy's diagnostics, Error() for the rest.
func getErrorMessage(err error) string {
	var diags diag.Diagnostics
	if errors.As(err, &diags) {
		return diags.AllMessages()
	}
	return err.Error()
}

func getHash(in []byte) string {
	h := fnv.New32()
	h.Write(in)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// ---- remotecfg.go ----

type service struct {
	configPath string
	args       arguments
	apiClient  *apiClient
	attrs      map[string]string
	cm         *configManager
	ready      bool
	rec        *recorder
}

func (s *service) systemAttributes() map[string]string {
	return map[string]string{"collector.version": alloyVersion, "collector.os": runtime.GOOS}
}

// update is Service.Update, the service block evaluated (at the initial load and at each reload).
func (s *service) update(newArgs arguments) error {
	if newArgs.URL == "" {
		s.apiClient = nil
		s.args = newArgs
		return nil
	}
	hash, err := newArgs.hash()
	if err != nil {
		return err
	}
	if s.apiClient == nil || !reflect.DeepEqual(s.args.httpClientConfig(), newArgs.httpClientConfig()) || s.args.URL != newArgs.URL {
		client, err := newAPIClient(newArgs, s.rec)
		if err != nil {
			return err
		}
		s.apiClient = client
	}
	s.cm.argsHash = hash
	s.attrs = s.systemAttributes()
	maps.Copy(s.attrs, newArgs.Attributes)
	s.args = newArgs
	if err := s.registerCollector(); err != nil {
		return err
	}
	if s.ready {
		s.fetchLoadConfig(true)
	}
	return nil
}

// run is the start of Service.Run: a fetch (cache as fallback), then RegisterCollector.
func (s *service) run() error {
	s.ready = true
	s.fetchLoadConfig(true)
	return s.registerCollector()
}

func (s *service) fetchLoadConfig(allowCacheFallback bool) {
	if s.args.URL == "" || s.apiClient == nil {
		return
	}
	s.cm.fetchLoadConfig(s.getConfig, allowCacheFallback)
}

func (s *service) getConfig() (*collectorv1.GetConfigResponse, error) {
	resp, err := s.apiClient.getConfig(context.Background(), &collectorv1.GetConfigRequest{
		Id:                 s.args.ID,
		LocalAttributes:    s.attrs,
		Hash:               s.cm.remoteHash,
		RemoteConfigStatus: s.cm.getRemoteConfigStatusForRequest(),
		EffectiveConfig:    s.cm.getEffectiveConfigForRequest(),
	})
	if err != nil && !errors.Is(err, errNotModified) {
		// Sent again with the next request.
		s.cm.lastSentConfigStatus = nil
		s.cm.lastSentEffectiveConfig = nil
	}
	return resp, err
}

func (s *service) registerCollector() error {
	if s.apiClient == nil {
		return nil
	}
	_, err := s.apiClient.client.RegisterCollector(context.Background(), connect.NewRequest(&collectorv1.RegisterCollectorRequest{
		Id:              s.args.ID,
		LocalAttributes: s.attrs,
		Name:            s.args.Name,
	}))
	return err
}

func (s *service) unregisterCollector() error {
	if s.apiClient == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := s.apiClient.client.UnregisterCollector(ctx, connect.NewRequest(&collectorv1.UnregisterCollectorRequest{Id: s.args.ID}))
	return err
}

// ---- the script ----

// recorder is a Connect interceptor that notes every call as the server saw it and what came back.
type recorder struct {
	calls []call
}

type call struct {
	Method   string          `json:"method"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    *callError      `json:"error,omitempty"`
}

type callError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

var asJSON = protojson.MarshalOptions{EmitUnpopulated: true}

func (r *recorder) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		c := call{Method: req.Spec().Procedure[strings.LastIndex(req.Spec().Procedure, "/")+1:]}
		c.Request, _ = asJSON.Marshal(req.Any().(proto.Message))
		resp, err := next(ctx, req)
		if err != nil {
			c.Error = &callError{Code: connect.CodeOf(err).String(), Message: err.Error()}
		} else {
			c.Response, _ = asJSON.Marshal(resp.Any().(proto.Message))
		}
		r.calls = append(r.calls, c)
		return resp, err
	}
}

func (r *recorder) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (r *recorder) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// step is one command's answer: the calls it made and the client's state after it.
type step struct {
	Command string   `json:"command"`
	Calls   []call   `json:"calls"`
	Log     []string `json:"log"`
	// Error is a failed start (Alloy exits) or reload (Alloy keeps what it runs).
	Error        string `json:"error,omitempty"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
	RemoteHash   string `json:"remoteHash"`
	LastLoaded   string `json:"lastLoaded"`
	LastReceived string `json:"lastReceived"`
	Running      string `json:"running"`
}

func main() {
	configPath := flag.String("config", "", "the Alloy config file with the remotecfg block")
	storage := flag.String("storage", "", "Alloy's --storage.path (the remote config cache is under remotecfg/)")
	flag.Parse()
	if *configPath == "" || *storage == "" {
		fmt.Fprintln(os.Stderr, "usage: alloy-remotecfg -config FILE -storage DIR < script")
		os.Exit(2)
	}
	remotecfgPath := filepath.Join(*storage, "remotecfg")
	if err := os.MkdirAll(remotecfgPath, 0o750); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var log []string
	s := &service{configPath: *configPath, rec: &recorder{}, cm: newConfigManager(remotecfgPath, *configPath, &log)}
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		command := strings.TrimSpace(in.Text())
		s.rec.calls, log = nil, nil
		var err error
		exit := false
		switch command {
		case "start":
			var args arguments
			if args, err = readArguments(s.configPath); err == nil {
				err = s.update(args)
			}
			if err != nil {
				err, exit = fmt.Errorf("could not perform the initial load successfully: %w", err), true
			} else if err = s.run(); err != nil {
				// The service's Run returns: nothing polls any more.
				err, exit = fmt.Errorf("the remotecfg service stopped: %w", err), true
			}
		case "poll":
			s.fetchLoadConfig(false)
		case "reload":
			var args arguments
			if args, err = readArguments(s.configPath); err == nil {
				err = s.update(args)
			}
		case "stop":
			err, exit = s.unregisterCollector(), true
		default:
			fmt.Fprintf(os.Stderr, "unknown command %q\n", command)
			os.Exit(2)
		}
		answer := step{
			Command:      command,
			Calls:        append([]call{}, s.rec.calls...),
			Log:          append([]string{}, log...),
			Status:       s.cm.remoteConfigStatus.Status.String(),
			ErrorMessage: s.cm.remoteConfigStatus.ErrorMessage,
			RemoteHash:   s.cm.remoteHash,
			LastLoaded:   s.cm.lastLoadedConfigHash,
			LastReceived: s.cm.lastReceivedConfigHash,
			Running:      string(s.cm.running),
		}
		if err != nil {
			answer.Error = err.Error()
		}
		if err := out.Encode(answer); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if exit {
			return
		}
	}
}
