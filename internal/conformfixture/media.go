package conformfixture

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// redPixelPNG is a 1x1 red PNG, the image of the image scenarios.
var redPixelPNG = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// silentWAV is a minimal WAV file: 8 samples of 8-bit mono silence at
// 8 kHz, the audio of the audio scenario.
var silentWAV = func() []byte {
	const samples = 8
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(8000)) // sample rate
	le(uint32(8000)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{128}, samples))
	return b.Bytes()
}()
