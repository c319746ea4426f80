/*
 * elf_symbols.c - offline names for code addresses in a trace: a file
 * offset inside a DSO (from the trace's MAPS records) to "function+0xNN",
 * read from the ELF symbol tables of the file now at that path.
 *
 * Design: each DSO is mapped read-only once and its function symbols
 * (.symtab, else .dynsym) are sorted by address; a lookup converts the file
 * offset to a virtual address through the PT_LOAD program headers, then
 * binary-searches.  Every offset, count and string read from the file is
 * bounds-checked: the file may be anything (a trace read on another
 * machine, a library rebuilt since).  A file that does not parse simply
 * has no symbols.  No debug information is read: file:line needs
 * addr2line -e DSO OFFSET (the dump prints DSO and offset for that).
 *
 * Alternatives considered: symbolizing in the traced process (dladdr at
 * writeout) would take the dynamic loader's lock inside the writer's lock,
 * and names only exported symbols; libdw gives file:line and inlines but
 * is a new dependency for the CLI.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define MAX_FILES 256
#define MAX_LOADS 32

struct elf_sym {
	uint64_t addr, size;
	const char *name;
};

struct elf_file {
	char *path;
	const uint8_t *map;
	size_t size;
	struct elf_sym *syms;
	size_t n_syms;
	Elf64_Phdr loads[MAX_LOADS];
	unsigned n_loads;
};

static struct elf_file files[MAX_FILES];
static unsigned n_files;

static int in_bounds(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Function symbols of section @sh (a symbol table) into @f. */
static void read_symtab(struct elf_file *f, const Elf64_Ehdr *eh, const Elf64_Shdr *shdrs,
			const Elf64_Shdr *sh)
{
	const Elf64_Shdr *strsh;
	size_t n;

	if (sh->sh_link >= eh->e_shnum || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_bounds(f->size, sh->sh_offset, sh->sh_size))
		return;
	strsh = &shdrs[sh->sh_link];
	if (!in_bounds(f->size, strsh->sh_offset, strsh->sh_size) || !strsh->sh_size)
		return;
	n = sh->sh_size / sizeof(Elf64_Sym);
	f->syms = calloc(n ? n : 1, sizeof(*f->syms));
	if (!f->syms)
		return;
	for (size_t i = 0; i < n; i++) {
		Elf64_Sym s;
		const char *strs = (const char *)f->map + strsh->sh_offset;

		memcpy(&s, f->map + sh->sh_offset + i * sizeof(s), sizeof(s));
		if ((ELF64_ST_TYPE(s.st_info) != STT_FUNC &&
		     ELF64_ST_TYPE(s.st_info) != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || !s.st_value || s.st_name >= strsh->sh_size ||
		    !memchr(strs + s.st_name, 0, strsh->sh_size - s.st_name))
			continue;
		f->syms[f->n_syms].addr = s.st_value;
		f->syms[f->n_syms].size = s.st_size;
		f->syms[f->n_syms].name = strs + s.st_name;
		f->n_syms++;
	}
	qsort(f->syms, f->n_syms, sizeof(*f->syms), sym_cmp);
}

static void elf_parse(struct elf_file *f)
{
	Elf64_Ehdr eh;
	const Elf64_Shdr *shdrs;
	Elf64_Shdr *copy;
	int have_symtab = 0;

	if (f->size < sizeof(eh))
		return;
	memcpy(&eh, f->map, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return;
	if (eh.e_phentsize == sizeof(Elf64_Phdr) &&
	    in_bounds(f->size, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr))) {
		for (unsigned i = 0; i < eh.e_phnum && f->n_loads < MAX_LOADS; i++) {
			Elf64_Phdr ph;

			memcpy(&ph, f->map + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_LOAD)
				f->loads[f->n_loads++] = ph;
		}
	}
	if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_bounds(f->size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)) ||
	    !eh.e_shnum)
		return;
	/* An aligned copy of the section headers. */
	copy = malloc((size_t)eh.e_shnum * sizeof(*copy));
	if (!copy)
		return;
	memcpy(copy, f->map + eh.e_shoff, (size_t)eh.e_shnum * sizeof(*copy));
	shdrs = copy;
	for (unsigned i = 0; i < eh.e_shnum; i++)
		have_symtab |= shdrs[i].sh_type == SHT_SYMTAB;
	for (unsigned i = 0; i < eh.e_shnum; i++)
		if (shdrs[i].sh_type == (have_symtab ? SHT_SYMTAB : SHT_DYNSYM)) {
			read_symtab(f, &eh, shdrs, &shdrs[i]);
			break;
		}
	free(copy);
}

static struct elf_file *elf_get(const char *path)
{
	struct elf_file *f;
	struct stat st;
	int fd;

	for (unsigned i = 0; i < n_files; i++)
		if (!strcmp(files[i].path, path))
			return &files[i];
	if (n_files == MAX_FILES)
		return NULL;
	f = &files[n_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	n_files++;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return f;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m != MAP_FAILED) {
			f->map = m;
			f->size = (size_t)st.st_size;
			elf_parse(f);
		}
	}
	close(fd);
	return f;
}

const char *cli_elf_symbol(const char *path, uint64_t file_off, uint64_t *sym_off)
{
	struct elf_file *f = path && *path == '/' ? elf_get(path) : NULL;
	uint64_t vaddr = 0;
	size_t lo = 0, hi;
	int found = 0;

	if (!f || !f->n_syms)
		return NULL;
	for (unsigned i = 0; i < f->n_loads; i++) {
		const Elf64_Phdr *ph = &f->loads[i];

		if (file_off >= ph->p_offset && file_off - ph->p_offset < ph->p_filesz) {
			vaddr = file_off - ph->p_offset + ph->p_vaddr;
			found = 1;
			break;
		}
	}
	if (!found)
		return NULL;
	hi = f->n_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	if (f->syms[lo].size && vaddr - f->syms[lo].addr >= f->syms[lo].size)
		return NULL;
	*sym_off = vaddr - f->syms[lo].addr;
	return f->syms[lo].name;
}
