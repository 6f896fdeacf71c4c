package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// ChildVerb is the hidden first argument that makes the mcpx executable a
// script's child process: cmd/mcpx hands the rest to [RunChild].
const ChildVerb = "sandbox-child"

// RunChild is the child's main: args are its memory limit in bytes. It
// serves one script on stdin and stdout and returns the exit code.
func RunChild(args []string) int {
	mem := int64(DefaultMemory)
	if len(args) > 0 {
		if n, err := strconv.ParseInt(args[0], 10, 64); err == nil && n > 0 {
			mem = n
		}
	}
	limitMemory(mem)
	out := &lineWriter{w: bufio.NewWriterSize(os.Stdout, 16<<10)}
	c := newChild(out, mem)
	// esbuild's first transform in a process sets up its tables: done
	// while the child waits, it is not on a script's path (3.6 ms of a
	// warm child's 9.4; BenchmarkExecWarm).
	_, _ = transform("return 0")
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var run message
	if err := readMessage(in, &run); err != nil || run.Op != opRun {
		return 0 // the parent let this warm child go, or is gone
	}
	go c.readParent(in)
	lim := Limits{}
	if run.Limits != nil {
		lim = *run.Limits
	}
	c.lim = lim.withDefaults()
	out.limit, out.max = c.lim.lineLimit(), c.lim.MaxMessageBytes
	stopWatch := c.watch()
	value, fail := c.run(run.Code, run.Prelude)
	stopWatch()
	c.finish(value, fail)
	return 0
}

// finish sends the script's done message, once: the loop sends it when
// the script ends, the watcher when a halted script does not. A failure's
// message is cut to maxFailBytes (a script may throw any string).
func (c *child) finish(value json.RawMessage, fail *failure) {
	c.doneOnce.Do(func() {
		if fail != nil && len(fail.Message) > maxFailBytes {
			fail.Message = fmt.Sprintf("%s… [cut: %d bytes in all]", strings.ToValidUTF8(fail.Message[:maxFailBytes], ""), len(fail.Message))
		}
		if err := c.out.send(&message{Op: opDone, Value: value, Fail: fail}, "the script's end"); err != nil {
			c.out.send(&message{Op: opDone, Fail: &failure{Kind: failThrew, Message: err.Error()}}, "")
		}
	})
}

// maxFailBytes bounds the message of a script's failure.
const maxFailBytes = 16 << 10

// child is the state of the script's process. Fields below loop are used
// on the loop goroutine (the one that runs JavaScript) only.
type child struct {
	vm        *goja.Runtime
	out       *lineWriter
	mem       int64
	lim       Limits
	stringify goja.Callable
	parse     goja.Callable
	errorCtor goja.Value

	jobs     chan func() // run on the loop goroutine, in order
	stop     chan *failure
	doneOnce sync.Once

	// loop
	nextID   int64
	made     int               // host calls made
	inflight int               // sent and not answered
	waiting  []pendingCall     // beyond MaxConcurrent, in order
	pending  map[int64]promise // by call id
	timers   map[int64]*time.Timer
	logged   int
	dropped  bool
	fail     *failure // set by an uncaught error in a callback
}

type promise struct{ resolve, reject func(any) error }

type pendingCall struct {
	id   int64
	line []byte // the call, encoded
}

func newChild(out *lineWriter, mem int64) *child {
	vm := goja.New()
	// eval and Function compile with source maps off: a sourceMappingURL
	// in their text would otherwise make goja read a file.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	vm.SetMaxCallStackSize(10000)
	c := &child{vm: vm, out: out, mem: mem, jobs: make(chan func(), 256), stop: make(chan *failure, 1),
		pending: map[int64]promise{}, timers: map[int64]*time.Timer{}}
	j := vm.Get("JSON").ToObject(vm)
	c.stringify, _ = goja.AssertFunction(j.Get("stringify"))
	c.parse, _ = goja.AssertFunction(j.Get("parse"))
	c.errorCtor = vm.Get("Error")
	c.installGlobals()
	return c
}

// readParent reads replies and a stop from the parent until its stdin
// ends, which means the parent is gone: the child exits at once.
func (c *child) readParent(in *bufio.Reader) {
	for {
		var m message
		if err := readMessage(in, &m); err != nil {
			os.Exit(0)
		}
		switch m.Op {
		case opReply:
			c.jobs <- func() { c.settle(&m) }
		case opStop:
			c.halt(&failure{Kind: failStopped, Message: m.Reason})
		}
	}
}

// halt stops the script: whatever JavaScript runs throws, uncatchably,
// and the loop ends. The first reason wins.
func (c *child) halt(f *failure) {
	select {
	case c.stop <- f:
		c.vm.Interrupt(f)
	default:
	}
}

// run compiles and runs the script and its event loop until the script's
// promise settles, something stops it, or nothing is left that could
// settle it.
func (c *child) run(code, prelude string) (json.RawMessage, *failure) {
	src, err := transform(code)
	if err != nil {
		return nil, &failure{Kind: failSyntax, Message: err.Error()}
	}
	if prelude != "" {
		fn, err := c.vm.RunScript("prelude.js", "("+prelude+")")
		if err != nil {
			return nil, c.failure(err)
		}
		call, ok := goja.AssertFunction(fn)
		if !ok {
			return nil, &failure{Kind: failThrew, Message: "the prelude is not a function"}
		}
		if _, err := call(goja.Undefined(), c.hostBridge()); err != nil {
			return nil, c.failure(err)
		}
	}
	ast, err := goja.Parse("script.ts", src, parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are read from the script only")
	}))
	if err != nil {
		return nil, &failure{Kind: failSyntax, Message: "the script does not compile: " + err.Error()}
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, &failure{Kind: failSyntax, Message: "the script does not compile: " + err.Error()}
	}
	if _, err := c.vm.RunProgram(prg); err != nil {
		return nil, c.failure(err)
	}
	main, _ := goja.AssertFunction(c.vm.Get(mainName))
	v, err := main(goja.Undefined())
	if err != nil {
		return nil, c.failure(err)
	}
	p, _ := v.Export().(*goja.Promise)
	for {
		if f := c.stopped(); f != nil {
			return nil, f
		}
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return c.value(p.Result())
		case goja.PromiseStateRejected:
			return nil, &failure{Kind: failThrew, Message: c.describe(p.Result())}
		}
		if c.fail != nil {
			return nil, c.fail
		}
		if c.inflight == 0 && len(c.waiting) == 0 && len(c.timers) == 0 && len(c.jobs) == 0 {
			return nil, &failure{Kind: failStuck, Message: "the script awaits a promise that nothing is left to settle"}
		}
		select {
		case job := <-c.jobs:
			job()
		case f := <-c.stop:
			return nil, f
		}
	}
}

// stopped returns why the script was stopped, if it was.
func (c *child) stopped() *failure {
	select {
	case f := <-c.stop:
		return f
	default:
		return nil
	}
}

// failure describes an error from running JavaScript.
func (c *child) failure(err error) *failure {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if f, ok := ie.Value().(*failure); ok {
			return f
		}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &failure{Kind: failThrew, Message: "RangeError: maximum call stack size exceeded"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return &failure{Kind: failThrew, Message: c.describe(ex.Value()) + stackOf(ex)}
	}
	return &failure{Kind: failThrew, Message: err.Error()}
}

// value returns the script's value as JSON, nil for undefined.
func (c *child) value(v goja.Value) (json.RawMessage, *failure) {
	if goja.IsUndefined(v) {
		return nil, nil
	}
	s, err := c.stringify(goja.Undefined(), v)
	if err != nil {
		f := c.failure(err)
		if f.Kind == failThrew {
			f.Message = "the script's value cannot be written as JSON: " + f.Message
		}
		return nil, f
	}
	if goja.IsUndefined(s) {
		return nil, nil // a function, say
	}
	str := s.String()
	if len(str) > c.lim.MaxResultBytes {
		return nil, limitFailure(LimitResult, fmt.Sprintf("%d bytes", c.lim.MaxResultBytes))
	}
	return json.RawMessage(str), nil
}

// lineWriter writes messages to the parent, one per line, from any
// goroutine. Lines longer than limit (0: none) are not written.
type lineWriter struct {
	mu    sync.Mutex
	w     *bufio.Writer
	limit int
	max   int // the script's MaxMessageBytes, to name in errors
}

// tooLongError is a message past the script's message size limit.
type tooLongError struct {
	what     string
	n, limit int
}

func (e *tooLongError) Error() string {
	return fmt.Sprintf("%s is %d bytes as JSON, past the script's message size limit (%d bytes)", e.what, e.n, e.limit)
}

// encode returns m as one line, newline included; what names it in the
// error of a line past the limit. HTML characters are left as they are:
// escaped, a result within its limit could grow sixfold.
func (l *lineWriter) encode(m *message, what string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if l.limit > 0 && b.Len()-1 > l.limit {
		return nil, &tooLongError{what: what, n: b.Len() - 1, limit: l.max}
	}
	return b.Bytes(), nil
}

// send writes m; what names it in the error of a message too long to send.
func (l *lineWriter) send(m *message, what string) error {
	line, err := l.encode(m, what)
	if err != nil {
		return err
	}
	l.write(line)
	return nil
}

// write writes an encoded line.
func (l *lineWriter) write(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(line)
	if l.w.Flush() != nil {
		os.Exit(0) // the parent is gone
	}
}

// readMessage reads one line as a message: the child's reading of its
// parent, which it trusts.
func readMessage(r *bufio.Reader, m *message) error {
	line, err := r.ReadBytes('\n')
	if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
		return err
	}
	return json.Unmarshal(line, m)
}

// errLineTooLong is a line of the child past the parent's limit.
var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most limit() bytes, its newline aside,
// into buf, which it returns, grown as needed. A longer line is
// errLineTooLong, read no further than the limit. The limit is read
// after the line's first bytes came: it may change while the reader
// waits.
func readLine(r *bufio.Reader, buf []byte, limitOf func() int) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		limit := limitOf()
		if len(buf)+len(chunk) > limit+1 || len(buf)+len(chunk) > limit && err != nil {
			return buf, errLineTooLong
		}
		if need := len(buf) + len(chunk); need > cap(buf) { // doubling, not append's 1.25: less to collect
			grown := make([]byte, 0, min(max(2*cap(buf), need), limit+1))
			buf = append(grown, buf...)
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, nil
		}
		return buf, err
	}
}
