package sandbox

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// installGlobals adds what a script may use beyond the ECMAScript
// built-ins: console, setTimeout, clearTimeout and sleep. Nothing else is
// added: goja itself has no require, fetch, process or file access.
func (c *child) installGlobals() {
	vm := c.vm
	console := vm.NewObject()
	for _, name := range []string{"log", "info", "warn", "error", "debug"} {
		console.Set(name, func(call goja.FunctionCall) goja.Value {
			c.log(call.Arguments)
			return goja.Undefined()
		})
	}
	vm.Set("console", console)
	vm.Set("setTimeout", func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("setTimeout needs a function"))
		}
		args := append([]goja.Value(nil), call.Arguments[min(2, len(call.Arguments)):]...)
		return vm.ToValue(c.after(delay(call.Argument(1)), func() {
			if _, err := fn(goja.Undefined(), args...); err != nil && c.fail == nil {
				c.fail = c.failure(err)
			}
		}))
	})
	vm.Set("clearTimeout", func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		if t := c.timers[id]; t != nil {
			t.Stop()
			delete(c.timers, id)
		}
		return goja.Undefined()
	})
	vm.Set("sleep", func(call goja.FunctionCall) goja.Value {
		p, resolve, _ := vm.NewPromise()
		c.after(delay(call.Argument(0)), func() { c.settled(resolve(goja.Undefined())) })
		return vm.ToValue(p)
	})
}

// delay reads a timer's milliseconds as setTimeout does: anything not a
// positive number is 0.
func delay(v goja.Value) time.Duration {
	ms := v.ToFloat()
	if math.IsNaN(ms) || ms <= 0 {
		return 0
	}
	return time.Duration(min(ms, float64(math.MaxInt64/int64(time.Millisecond))) * float64(time.Millisecond))
}

// after runs f on the loop after d, and returns the timer's id.
func (c *child) after(d time.Duration, f func()) int64 {
	if len(c.timers) >= c.lim.MaxTimers {
		panic(c.newError(fmt.Sprintf("the script has %d timers pending, its limit", c.lim.MaxTimers)))
	}
	c.nextID++
	id := c.nextID
	c.timers[id] = time.AfterFunc(d, func() {
		c.jobs <- func() {
			if _, ok := c.timers[id]; !ok {
				return // cleared after it fired
			}
			delete(c.timers, id)
			f()
		}
	})
	return id
}

// settled records an uncatchable error that settling a promise ran into
// (the script was interrupted while a reaction ran).
func (c *child) settled(err error) {
	if err != nil && c.fail == nil {
		c.fail = c.failure(err)
	}
}

// log sends one console line, within the output limit.
func (c *child) log(args []goja.Value) {
	if c.dropped {
		return
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = c.format(a)
	}
	line := strings.Join(parts, " ")
	if c.logged+len(line)+1 > c.lim.MaxOutputBytes {
		c.dropped = true
		line = fmt.Sprintf("[console output beyond %d bytes dropped]", c.lim.MaxOutputBytes)
	}
	c.logged += len(line) + 1
	if err := c.out.send(&message{Op: opLog, Text: line}, "a console line"); err != nil {
		c.out.send(&message{Op: opLog, Text: "[" + err.Error() + ": dropped]"}, "")
	}
}

// format prints a value as console.log does, near enough: strings as
// they are, objects as JSON.
func (c *child) format(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok && o.ClassName() != "Function" && o.ClassName() != "Error" {
		if s, err := c.stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
	}
	return v.String()
}

// describe prints a thrown value: an Error as "Name: message".
func (c *child) describe(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		return o.String()
	}
	return "uncaught " + c.format(v)
}

// stackOf returns the script's frames of an exception, on lines of their
// own.
func stackOf(ex *goja.Exception) string {
	var b strings.Builder
	for _, f := range ex.Stack() {
		pos := f.Position()
		if pos.Filename != "script.ts" || pos.Line == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n    at %s:%d:%d", pos.Filename, pos.Line, pos.Column)
	}
	return b.String()
}

// hostBridge is what the prelude is given to build the script's API on:
// call(method, params) returns a promise of the host's answer;
// notify(kind, data) sends data on without an answer.
func (c *child) hostBridge() goja.Value {
	vm := c.vm
	h := vm.NewObject()
	h.Set("call", func(call goja.FunctionCall) goja.Value {
		method := call.Argument(0).String()
		p, resolve, reject := vm.NewPromise()
		if c.made >= c.lim.MaxCalls {
			c.settled(reject(c.newError(fmt.Sprintf("the script made %d calls, its limit", c.lim.MaxCalls))))
			return vm.ToValue(p)
		}
		params, err := c.jsonWithin(call.Argument(1), "the call "+method)
		var line []byte
		if err == nil {
			line, err = c.out.encode(&message{Op: opCall, ID: c.nextID + 1, Method: method, Params: params}, "the call "+method)
		}
		if err != nil {
			c.settled(reject(c.newError(err.Error())))
			return vm.ToValue(p)
		}
		c.made++
		c.nextID++
		id := c.nextID
		c.pending[id] = promise{resolve, reject}
		pc := pendingCall{id: id, line: line}
		if c.inflight < c.lim.MaxConcurrent {
			c.inflight++
			c.out.write(pc.line)
		} else {
			c.waiting = append(c.waiting, pc)
		}
		return vm.ToValue(p)
	})
	h.Set("notify", func(call goja.FunctionCall) goja.Value {
		kind := call.Argument(0).String()
		data, err := c.jsonWithin(call.Argument(1), "the notification "+kind)
		if err == nil {
			err = c.out.send(&message{Op: opNotify, Kind: kind, Data: data}, "the notification "+kind)
		}
		if err != nil {
			panic(c.newError(err.Error()))
		}
		return goja.Undefined()
	})
	return h
}

// jsonWithin returns v as JSON, or an error naming what of a JSON text
// past the script's message size limit; undefined (or what JSON cannot
// hold) is null.
func (c *child) jsonWithin(v goja.Value, what string) (json.RawMessage, error) {
	s, err := c.stringify(goja.Undefined(), v)
	if err != nil {
		panic(err)
	}
	if goja.IsUndefined(s) {
		return json.RawMessage("null"), nil
	}
	str := s.String()
	if len(str) > c.lim.MaxMessageBytes {
		return nil, &tooLongError{what: what, n: len(str), limit: c.lim.MaxMessageBytes}
	}
	return json.RawMessage(str), nil
}

// settle answers a host call with the parent's reply, and sends the next
// waiting call.
func (c *child) settle(m *message) {
	p, ok := c.pending[m.ID]
	if !ok {
		return
	}
	delete(c.pending, m.ID)
	c.inflight--
	if len(c.waiting) > 0 {
		next := c.waiting[0]
		c.waiting = c.waiting[1:]
		c.inflight++
		c.out.write(next.line)
	}
	if m.Error != "" {
		c.settled(p.reject(c.newError(m.Error)))
		return
	}
	var v goja.Value = goja.Undefined()
	if len(m.Result) > 0 {
		parsed, err := c.parse(goja.Undefined(), c.vm.ToValue(string(m.Result)))
		if err != nil {
			c.settled(p.reject(c.newError(fmt.Sprintf("the host's answer is not JSON: %v", err))))
			return
		}
		v = parsed
	}
	c.settled(p.resolve(v))
}

// newError returns a new Error with message, made by the Error
// constructor the script started with.
func (c *child) newError(message string) *goja.Object {
	o, err := c.vm.New(c.errorCtor, c.vm.ToValue(message))
	if err != nil {
		panic(err)
	}
	return o
}
