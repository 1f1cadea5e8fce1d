// Package telemetry wires steward's logs (zap) into the Temporal SDK.
package telemetry

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger returns a zap logger writing to stderr: console format when
// stderr is a terminal, JSON otherwise, at the given level (debug, info,
// warn, error).
func NewLogger(level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	cfg := zap.NewProductionConfig()
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		cfg = zap.NewDevelopmentConfig()
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.DisableStacktrace = true
	return cfg.Build()
}

// SDKLogger adapts zap to the SDK's log.Logger (keyvals become fields).
type SDKLogger struct{ z *zap.SugaredLogger }

var _ log.Logger = (*SDKLogger)(nil)
var _ log.WithLogger = (*SDKLogger)(nil)

// NewSDKLogger adapts z for client.Options.Logger.
func NewSDKLogger(z *zap.Logger) *SDKLogger {
	return &SDKLogger{z: z.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

func (l *SDKLogger) Debug(msg string, keyvals ...any) { l.z.Debugw(msg, keyvals...) }
func (l *SDKLogger) Info(msg string, keyvals ...any)  { l.z.Infow(msg, keyvals...) }
func (l *SDKLogger) Warn(msg string, keyvals ...any)  { l.z.Warnw(msg, keyvals...) }
func (l *SDKLogger) Error(msg string, keyvals ...any) { l.z.Errorw(msg, keyvals...) }

// With returns a logger that adds keyvals to every line.
func (l *SDKLogger) With(keyvals ...any) log.Logger { return &SDKLogger{z: l.z.With(keyvals...)} }
