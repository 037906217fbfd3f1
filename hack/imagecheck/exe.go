/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"debug/elf"
	"debug/macho"
	"fmt"
)

// elfMachines and machoCPUs are the machine each GOARCH a release builds
// for is.
var (
	elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	machoCPUs   = map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}
)

// CheckExecutable checks, from its header alone, that the file at path
// runs on goos/goarch: a linux binary is a 64-bit little-endian ELF
// executable of that machine and static (no interpreter, no shared
// library), as an image with nothing but the binary needs; a darwin one
// is a Mach-O executable of that CPU (darwin binaries always link
// libSystem, so not static).
func CheckExecutable(path, goos, goarch string) error {
	switch goos {
	case "linux":
		return checkELF(path, goarch)
	case "darwin":
		return checkMachO(path, goarch)
	}
	return fmt.Errorf("no executable check for %s", goos)
}

func checkELF(path, goarch string) error {
	want, ok := elfMachines[goarch]
	if !ok {
		return fmt.Errorf("no ELF machine known for %s", goarch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not an ELF file: %w", err)
	}
	defer func() { _ = f.Close() }()
	if f.Machine != want {
		return fmt.Errorf("ELF machine is %s, want %s (linux/%s)", f.Machine, want, goarch)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || (f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN) {
		return fmt.Errorf("ELF is %s %s %s, want a 64-bit little-endian executable", f.Class, f.Data, f.Type)
	}
	// Static: no program interpreter (the dynamic loader) to start it and
	// no shared library to load (a static PIE is ET_DYN, so the type
	// alone does not say).
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("not static: it names a program interpreter (PT_INTERP)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("not static: it needs %v", libs)
	}
	return nil
}

func checkMachO(path, goarch string) error {
	want, ok := machoCPUs[goarch]
	if !ok {
		return fmt.Errorf("no Mach-O CPU known for %s", goarch)
	}
	f, err := macho.Open(path)
	if err != nil {
		return fmt.Errorf("not a Mach-O file: %w", err)
	}
	defer func() { _ = f.Close() }()
	if f.Cpu != want || f.Type != macho.TypeExec {
		return fmt.Errorf("Mach-O %s %s, want an executable for %s (darwin/%s)", f.Cpu, f.Type, want, goarch)
	}
	return nil
}
