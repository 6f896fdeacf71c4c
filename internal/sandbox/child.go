package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
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
	stopWatch := c.watch()
	value, fail := c.run(run.Code, run.Prelude)
	stopWatch()
	c.finish(value, fail)
	return 0
}

// finish sends the script's done message, once: the loop sends it when
// the script ends, the watcher when a halted script does not.
func (c *child) finish(value json.RawMessage, fail *failure) {
	c.doneOnce.Do(func() { c.out.send(&message{Op: opDone, Value: value, Fail: fail}) })
}

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
	id  int64
	msg *message
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
// goroutine.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) send(m *message) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	if l.w.Flush() != nil {
		os.Exit(0) // the parent is gone
	}
}

// readMessage reads one line as a message.
func readMessage(r *bufio.Reader, m *message) error {
	line, err := r.ReadBytes('\n')
	if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
		return err
	}
	return json.Unmarshal(line, m)
}
