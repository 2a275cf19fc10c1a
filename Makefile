# streamlab: the one entry point. `make help` lists what it can do.
#
# Programs are found by name, so a new lab needs no edit here:
#   labs/labNN_topic/labNN.cu  ->  ./labNN
#   exercises/given/exNN.cu around exercises/exNN_topic.cu  ->  ./exNN
#   exercises/given/exNN.cu around solutions/exNN_topic.cu  ->  ./solNN
# Everything links build/libstreamlab.a (common/ and kernels/).

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

BUILD  ?= build
BINDIR ?= .
NVCC   ?= nvcc
CC     := gcc

NVCC_PATH := $(shell command -v $(NVCC) 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC_PATH))

# ---- which GPU code to build ----------------------------------------------
# ARCH=sm_86 builds for that GPU only. Otherwise, on a machine with a GPU, ask
# the toolkit's own probe what it has (each distinct compute capability once);
# without one (CI=true, laptops, CI machines) build the portable default:
# machine code for each major family CUDA 13 supports (a cubin runs on later
# minor versions of its family: sm_80 code runs on sm_86 and sm_89) plus
# compute_75 PTX, which the driver compiles for anything newer at start-up.
PORTABLE := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
            -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100 \
            -gencode arch=compute_120,code=sm_120 -gencode arch=compute_75,code=compute_75
comma := ,
# ARCH takes what nvcc's -arch takes for one GPU's machine code: sm_NN
# (compute capability N.N: sm_86 for 8.6), or sm_NNa / sm_NNf, the arch- and
# family-specific variants of Hopper and newer. Anything else (86, sm86,
# compute_90, which builds PTX and no machine code, sm_35, which CUDA 13
# dropped) stops here with one line, before a compile that would stop with
# "nvcc fatal". nvcc's dry run (it compiles nothing) judges the number, so
# the list follows the toolkit; a bare number gets its sm_ form suggested.
ifdef ARCH
  ARCH_OK := $(and $(filter 1,$(words $(ARCH))),$(filter sm_%,$(ARCH)),$(if $(NVCC_PATH),$(shell \
               $(NVCC) -arch='$(strip $(ARCH))' --dryrun -c -x cu /dev/null -o /dev/null >/dev/null 2>&1 && echo yes),yes))
  ifeq ($(ARCH_OK),)
    ARCH_GUESS := $(if $(filter sm% compute_%,$(ARCH)),$(patsubst compute_%,sm_%,$(patsubst sm%,sm_%,$(patsubst sm_%,%,$(ARCH)))),sm_$(ARCH))
    ARCH_KNOWN := $(filter sm_%,$(if $(NVCC_PATH),$(shell $(NVCC) --list-gpu-code 2>/dev/null)))
    $(error ARCH=$(ARCH) is not a GPU architecture this build takes$(if $(filter $(ARCH_GUESS),$(ARCH_KNOWN)), (did you mean ARCH=$(ARCH_GUESS)?)): use sm_NN (sm_86 for compute capability 8.6), or sm_NNa / sm_NNf on Hopper and newer$(if $(ARCH_KNOWN),; this nvcc builds $(ARCH_KNOWN)); without ARCH the build targets the GPU found here)
  endif
  GENCODE := -arch=$(ARCH)
else ifneq ($(CI),true)
  DETECTED := $(sort $(subst $(comma), ,$(shell $(CUDA_HOME)/bin/__nvcc_device_query 2>/dev/null)))
  DETECTED := $(filter 7% 8% 9% 10% 11% 12% 13%,$(DETECTED))
endif
ifndef ARCH
  ifneq ($(DETECTED),)
    GENCODE := $(foreach cc,$(DETECTED),-gencode arch=compute_$(cc),code=sm_$(cc))
  else
    GENCODE := $(PORTABLE)
    # Said once, when the library is built: a student who expected code for
    # the GPU in front of them learns why it is not, and what to type.
    PORTABLE_NOTE := $(if $(filter true,$(CI)),CI=true,no GPU found here), so this is the portable build \
      ($(patsubst code=%,%,$(filter code=sm_%,$(subst $(comma), ,$(PORTABLE)))), PTX for newer GPUs); make ARCH=sm_NN builds for one GPU
  endif
endif

# ---- CUPTI, for --trace and --timeline --------------------------------------------
# Toolkits put it in extras/CUPTI (older layout) or beside the runtime. Found:
# linked, with an rpath so the programs find it at run time. Not found: the
# programs build all the same and --trace says this build has no CUPTI.
CUPTI_DIRS   := $(CUDA_HOME)/extras/CUPTI/lib64 $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib \
                $(CUDA_HOME)/targets/x86_64-linux/lib
CUPTI_LIBDIR := $(firstword $(foreach d,$(CUPTI_DIRS),$(if $(wildcard $(d)/libcupti.so),$(d))))
CUPTI_INC    := $(firstword $(foreach d,$(CUDA_HOME)/extras/CUPTI/include $(CUDA_HOME)/include,$(if $(wildcard $(d)/cupti.h),$(d))))
ifneq ($(and $(CUPTI_LIBDIR),$(CUPTI_INC)),)
  CUPTI_CFLAGS := -DSTREAMLAB_CUPTI -I$(CUPTI_INC)
  CUPTI_LIBS   := -L$(CUPTI_LIBDIR) -lcupti -Xlinker -rpath -Xlinker $(CUPTI_LIBDIR)
endif

# ---- NCCL, for lab13 (and ex13, sol13) and lab14's part 3 only -----------------
# Found once, here, the standard ways, first that has nccl.h and libnccl.so.2:
# NCCL_HOME=dir; the CUDA toolkit's own (development and CI machines); the
# nvidia-nccl-cu13 wheel beside PyTorch (GPU machines: a namespace package, so
# its folder is __path__, not __file__; python3 is asked only when the first
# two have none). The wheel has only libnccl.so.2, hence -l:libnccl.so.2, and
# an rpath so the program finds it at run time. Not found: lab13, ex13 and
# sol13 build all the same, without it, and say in one line what to install;
# nothing else needs NCCL or python3.
NCCL_PROGRAMS := lab13 lab14 ex13 sol13
nccl_libdir    = $(firstword $(foreach d,$(1)/lib64 $(1)/lib $(1)/targets/x86_64-linux/lib,$(if $(wildcard $(d)/libnccl.so.2),$(d))))
nccl_ok        = $(and $(wildcard $(1)/include/nccl.h),$(call nccl_libdir,$(1)))
# NCCL=no builds them without it, as on a machine with none (the CPU tests do).
NCCL_DIR := $(if $(filter no,$(NCCL)),,$(firstword $(foreach d,$(NCCL_HOME) $(CUDA_HOME),$(if $(call nccl_ok,$(d)),$(d)))))
ifeq ($(NCCL_DIR)$(filter no,$(NCCL)),)
  NCCL_WHEEL := $(shell command -v python3 >/dev/null 2>&1 && python3 -c \
                  'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
  NCCL_DIR := $(if $(NCCL_WHEEL),$(if $(call nccl_ok,$(NCCL_WHEEL)),$(NCCL_WHEEL)))
endif
ifneq ($(NCCL_DIR),)
  NCCL_LIBDIR := $(call nccl_libdir,$(NCCL_DIR))
  NCCL_FLAGS  := -DSTREAMLAB_NCCL -I$(NCCL_DIR)/include
  NCCL_LIBS   := -L$(NCCL_LIBDIR) -l:libnccl.so.2 -Xlinker -rpath -Xlinker $(NCCL_LIBDIR)
  NCCL_SAID   := NCCL found in $(NCCL_DIR) (library $(NCCL_LIBDIR)/libnccl.so.2)
else
  NCCL_SAID   := no NCCL found (NCCL_HOME, $(or $(CUDA_HOME),the toolkit), the nvidia-nccl-cu13 wheel): lab13, ex13 and sol13 build without it and exit 3, lab14 without its part 3
endif
# Per program: compile flags, and libraries (after the library, for the
# linker). Their own stamp, so that NCCL found or not rebuilds these alone.
$(foreach p,$(NCCL_PROGRAMS),$(eval PROG_FLAGS_$(p) := $(NCCL_FLAGS))$(eval PROG_LIBS_$(p) := $(NCCL_LIBS)))
NCCL_STAMP := $(BUILD)/nccl.stamp
$(shell mkdir -p $(BUILD) && echo '$(NCCL_FLAGS) $(NCCL_LIBS)' | cmp -s - $(NCCL_STAMP) \
        || echo '$(NCCL_FLAGS) $(NCCL_LIBS)' > $(NCCL_STAMP))

# ---- flags ------------------------------------------------------------------
# Host code warns with -Wall -Wextra and must build warning-free (a test checks).
# Tables (options, program_info) leave the fields they do not name at zero on
# purpose, and end with {NULL}: hence -Wno-missing-field-initializers.
CFLAGS    := -O2 -std=c99 -Wall -Wextra -Wno-missing-field-initializers \
             -I$(CUDA_HOME)/include $(CUPTI_CFLAGS)
NVCCFLAGS := -O2 -std=c++17 -lineinfo $(GENCODE) \
             -Xcompiler -Wall,-Wextra,-Wno-missing-field-initializers -Icommon -Ikernels
LDLIBS    := $(CUPTI_LIBS) -ldl -lpthread

LIB        := $(BUILD)/libstreamlab.a
COMMON_OBJ := $(patsubst common/%.c,$(BUILD)/common/%.o,$(wildcard common/*.c))
KERNEL_OBJ := $(patsubst kernels/%.c,$(BUILD)/kernels/%.o,$(wildcard kernels/*.c)) \
              $(patsubst kernels/%.cu,$(BUILD)/kernels/%.o,$(wildcard kernels/*.cu))
HEADERS    := $(wildcard common/*.h kernels/*.h)

# A change of ARCH must rebuild the device code: the flags live in a stamp
# file that is rewritten only when they change.
FLAGS_STAMP := $(BUILD)/flags.stamp
# (The tree's own place too: the exercises' points preview reads grader/rubrics/
# by a path compiled in.)
$(shell mkdir -p $(BUILD) && echo '$(GENCODE) $(NVCCFLAGS) $(CFLAGS) $(CURDIR)' | cmp -s - $(FLAGS_STAMP) \
        || echo '$(GENCODE) $(NVCCFLAGS) $(CFLAGS) $(CURDIR)' > $(FLAGS_STAMP))

# ---- programs -----------------------------------------------------------------
LAB_SRCS := $(sort $(wildcard labs/lab[0-9][0-9]_*/lab[0-9][0-9].cu))
EX_SRCS  := $(sort $(wildcard exercises/ex[0-9][0-9]_*.cu))
SOL_SRCS := $(sort $(wildcard solutions/ex[0-9][0-9]_*.cu))
number    = $(firstword $(subst _, ,$(patsubst ex%,%,$(notdir $(1)))))
LABS      := $(notdir $(basename $(LAB_SRCS)))
EXERCISES := $(foreach s,$(EX_SRCS),ex$(call number,$(s)))
SOLUTIONS := $(foreach s,$(SOL_SRCS),sol$(call number,$(s)))
# lab01 is built a second time with --default-stream per-thread, as
# ./lab01_ptds: the same source, one compiler flag, a different program.
PTDS_SRCS := $(filter labs/lab01_%,$(LAB_SRCS))
PTDS      := $(if $(PTDS_SRCS),lab01_ptds)
PROGRAMS  := $(LABS) $(PTDS) $(EXERCISES) $(SOLUTIONS)

# program NAME SOURCE [FLAGS]: ./NAME from SOURCE, linked with the library. With
# BINDIR=dir (the build test uses it) `make NAME` builds dir/NAME instead.
binary = $(if $(filter .,$(BINDIR)),$(1),$(BINDIR)/$(1))
define program
$(if $(filter .,$(BINDIR)),,.PHONY: $(1)
$(1): $(BINDIR)/$(1))
$(call binary,$(1)): $(2) $$(LIB) $$(HEADERS) $$(FLAGS_STAMP) | check-nvcc
	@mkdir -p $$(dir $$@)
	$$(NVCC) $$(NVCCFLAGS) $(3) $$(PROG_FLAGS_$(1)) -o $$@ $(2) $$(LIB) $$(LDLIBS) $$(PROG_LIBS_$(1))
endef
# A lab may keep part of its lesson in other files of its folder (lab09's
# table of calls): every .cu there is compiled into the one program, and its
# headers are prerequisites.
lab_extra = $(filter-out $(1),$(wildcard $(dir $(1))*.cu))
LAB_EXTRA_SRCS := $(foreach s,$(LAB_SRCS),$(call lab_extra,$(s)))
$(foreach s,$(LAB_SRCS),$(eval $(call program,$(notdir $(basename $(s))),$(s) $(call lab_extra,$(s)))))
$(foreach s,$(LAB_SRCS),$(eval $(call binary,$(notdir $(basename $(s)))): $(wildcard $(dir $(s))*.h)))
$(foreach s,$(PTDS_SRCS),$(eval $(call program,lab01_ptds,$(s),--default-stream per-thread)))
$(foreach p,$(filter $(NCCL_PROGRAMS),$(LABS)),$(eval $(call binary,$(p)): $(NCCL_STAMP)))

# ---- exercises: the given program around the student's file -----------------
# exercises/given/exNN.cu (options, measurement, checks, report: grading.h)
# and the student's file are two translation units, $(BUILD)/exNN/exNN.o and
# $(BUILD)/exNN/<the file's path>.o, linked with the grading objects and the
# library. grader/checks.py refuses the student's file before it is compiled
# when it includes a file from elsewhere, and its object before the link
# when it defines a symbol the program links from elsewhere (or runs code
# before main); the grader runs the same checks on the same flags (make
# grade-flags). Plain -c, no relocatable device code: no student's file
# defines a kernel that its given program launches.
GIVEN_NUMBERS := $(patsubst exercises/given/ex%.cu,%,$(wildcard exercises/given/ex[0-9][0-9].cu))
GIVEN_OBJ     := $(foreach n,$(GIVEN_NUMBERS),$(BUILD)/ex$(n)/ex$(n).o)
GIVEN_HEADERS := $(wildcard exercises/given/*.h)
GRADING_OBJ   := $(patsubst exercises/given/%.c,$(BUILD)/given/%.o,$(wildcard exercises/given/*.c))
EX_NVCCFLAGS  := $(NVCCFLAGS) -Iexercises/given
GIVEN_CFLAGS  := $(CFLAGS) -Icommon -Ikernels -Iexercises/given \
                 -DSTREAMLAB_RUBRICS='"$(CURDIR)/grader/rubrics"'
# What a student's object may not define too: besides its given program,
# whatever the link takes from the library, the CUDA runtime or the C library.
CUDART_STATIC := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a \
                   $(CUDA_HOME)/targets/x86_64-linux/lib/libcudart_static.a))
LIBC_SHARED   := $(realpath $(shell $(CC) -print-file-name=libc.so.6) \
                   $(shell $(CC) -print-file-name=libm.so.6))
DEFINERS       = $(GRADING_OBJ) $(LIB) $(CUDART_STATIC) $(LIBC_SHARED)
CHECKS        := python3 grader/checks.py

# exercise NAME NN SOURCE: ./NAME, the given program exNN around SOURCE.
define exercise
$(if $(filter .,$(BINDIR)),,.PHONY: $(1)
$(1): $(BINDIR)/$(1))
$(BUILD)/ex$(2)/$(basename $(3)).o: $(3) $$(GIVEN_HEADERS) $$(HEADERS) grader/checks.py $$(FLAGS_STAMP) | check-nvcc
	@mkdir -p $$(dir $$@)
	@$$(CHECKS) includes $(3) -- $$(NVCC) $$(EX_NVCCFLAGS)
	$$(NVCC) $$(EX_NVCCFLAGS) -c -o $$@ $(3)
$(call binary,$(1)): $(BUILD)/ex$(2)/ex$(2).o $(BUILD)/ex$(2)/$(basename $(3)).o $$(GRADING_OBJ) $$(LIB)
	@mkdir -p $$(dir $$@)
	@$$(CHECKS) symbols --source $(3) $(BUILD)/ex$(2)/$(basename $(3)).o -- $(BUILD)/ex$(2)/ex$(2).o $$(DEFINERS)
	$$(NVCC) $$(EX_NVCCFLAGS) -o $$@ $(BUILD)/ex$(2)/ex$(2).o $(BUILD)/ex$(2)/$(basename $(3)).o $$(GRADING_OBJ) $$(LIB) $$(LDLIBS) $$(PROG_LIBS_ex$(2))
endef

define given_object
$(BUILD)/ex$(1)/ex$(1).o: exercises/given/ex$(1).cu $$(GIVEN_HEADERS) $$(HEADERS) $$(FLAGS_STAMP) | check-nvcc
	@mkdir -p $$(dir $$@)
	$$(NVCC) $$(EX_NVCCFLAGS) $$(PROG_FLAGS_ex$(1)) -c -o $$@ $$<
endef
$(foreach n,$(GIVEN_NUMBERS),$(eval $(call given_object,$(n))))
$(foreach p,$(filter $(NCCL_PROGRAMS),$(EXERCISES) $(SOLUTIONS)),$(eval $(call binary,$(p)): $(NCCL_STAMP)))
$(foreach p,$(filter $(NCCL_PROGRAMS),$(EXERCISES)),$(eval $(BUILD)/$(p)/$(p).o: $(NCCL_STAMP)))

$(BUILD)/given/%.o: exercises/given/%.c $(GIVEN_HEADERS) $(HEADERS) $(FLAGS_STAMP) | check-nvcc
	@mkdir -p $(dir $@)
	$(CC) $(GIVEN_CFLAGS) -c -o $@ $<

# exNN and solNN: each around its given program.
$(foreach s,$(EX_SRCS),$(eval $(call exercise,ex$(call number,$(s)),$(call number,$(s)),$(s))))
$(foreach s,$(SOL_SRCS),$(eval $(call exercise,sol$(call number,$(s)),$(call number,$(s)),$(s))))

# ---- the library ----------------------------------------------------------------
$(LIB): $(COMMON_OBJ) $(KERNEL_OBJ)
	ar rcs $@ $^
	$(if $(PORTABLE_NOTE),@echo 'make: $(PORTABLE_NOTE)' >&2)

$(BUILD)/common/%.o: common/%.c $(HEADERS) $(FLAGS_STAMP) | check-nvcc
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/kernels/%.o: kernels/%.c $(HEADERS) $(FLAGS_STAMP) | check-nvcc
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/kernels/%.o: kernels/%.cu $(HEADERS) $(FLAGS_STAMP) | check-nvcc
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

# ---- host-only programs the tests drive ---------------------------------------
TEST_TOOLS := $(BUILD)/tests/stats_test $(BUILD)/tests/report_test $(BUILD)/tests/gpu_probe \
              $(BUILD)/tests/trace_test $(BUILD)/tests/machine_test

$(BUILD)/tests/stats_test: tests/tools/stats_test.c common/stats.c common/stats.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c99 -Wall -Wextra -Icommon -o $@ tests/tools/stats_test.c common/stats.c

$(BUILD)/tests/machine_test: tests/tools/machine_test.c common/machine.c common/machine.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c99 -Wall -Wextra -Icommon -o $@ tests/tools/machine_test.c common/machine.c

$(BUILD)/tests/trace_test: tests/tools/trace_test.c common/trace.c common/json.c common/trace.h common/json.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c99 -Wall -Wextra -Icommon -o $@ tests/tools/trace_test.c common/trace.c common/json.c

# The rubric reader of the exercises' points preview, alone (cpu_grade.bats).
TEST_TOOLS += $(BUILD)/tests/preview_test
$(BUILD)/tests/preview_test: tests/tools/preview_test.c exercises/given/rubric.c exercises/given/rubric.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c99 -Wall -Wextra -Iexercises/given -o $@ tests/tools/preview_test.c exercises/given/rubric.c -lm

# make stress LOAD=host: threads copying host memory; plain C and pthreads, no CUDA.
TEST_TOOLS += $(BUILD)/tests/host_load
$(BUILD)/tests/host_load: tests/tools/host_load.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c99 -Wall -Wextra -pthread -o $@ tests/tools/host_load.c

# Host C compiled by the C compiler; nvcc links it with the CUDA runtime.
$(BUILD)/tests/%: tests/tools/%.c $(LIB) $(HEADERS) | check-nvcc
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Icommon -c -o $@.o $<
	$(NVCC) -o $@ $@.o $(LIB) $(LDLIBS)

# ---- results and plots ----
# make results: every lab with --csv on this GPU (plus lab04's sweep, the
# traces, and sol01, sol04, sol06 and sol08 traced) into
# results/<gpu>-<date>/; RUNS=N runs each lab N times and adds the spread of
# each lab's key number. make plots: the figures of the newest
# results folder, or of RESULTS=dir, into that folder. PYTHON= names a
# Python 3 with matplotlib; by default plots/python.sh finds one.
# make stress RUNS=50: every lab 50 times in each of MODES ("quick default":
# --quick --csv and --csv), interleaved, then per verdict how often its
# effect was observed, the re-measurements used and the spread of its value,
# into results/stress-<gpu>-<date>/ (STRESS_OUT=dir for another folder).
# LOAD=gpu|host|both runs a background load beside them (gpu_load, host_load),
# STRESS_PROGRAMS="lab00 lab02" runs some labs, STRICT=1 fails unless every
# verdict was observed in every run, LAB_TIMEOUT=S limits a run (default 120).
# tests/stress.sh says more.
.PHONY: results plots stress
RUNS    ?= 1
RESULTS ?=
PYTHON  ?=
MODES           ?= quick default
LOAD            ?= none
STRESS_PROGRAMS ?= $(LABS) $(PTDS)
STRESS_OUT      ?=
STRICT          ?=
STRESS_LOADS    := $(if $(filter gpu both,$(LOAD)),$(BUILD)/tests/gpu_load) \
                   $(if $(filter host both,$(LOAD)),$(BUILD)/tests/host_load)

# The solutions whose traced run figures 11-14 draw (none where solutions/ is withheld).
SCHEDULE_SOLS := $(filter sol01 sol04 sol06 sol08,$(SOLUTIONS))
results: $(LABS) $(PTDS) $(SCHEDULE_SOLS) $(BUILD)/tests/gpu_probe ## run every lab on this GPU, keep the reports (RUNS=N)
	@RUNS='$(RUNS)' BINDIR='$(BINDIR)' NVCC='$(NVCC)' PYTHON='$(or $(PYTHON),python3)' \
	  GPU_PROBE='$(BUILD)/tests/gpu_probe' plots/results.sh $(LABS) $(PTDS) $(SCHEDULE_SOLS)

# (A name make does not know is left to stress.sh, which names it.)
stress: $(filter $(PROGRAMS),$(STRESS_PROGRAMS)) $(STRESS_LOADS) ## run every lab RUNS=N times, count each verdict (LOAD=gpu|host|both)
	@RUNS='$(RUNS)' MODES='$(MODES)' LOAD='$(LOAD)' STRICT='$(STRICT)' STRESS_OUT='$(STRESS_OUT)' \
	  BINDIR='$(BINDIR)' LAB_TIMEOUT='$(LAB_TIMEOUT)' \
	  GPU_LOAD='$(BUILD)/tests/gpu_load' HOST_LOAD='$(BUILD)/tests/host_load' \
	  tests/stress.sh $(STRESS_PROGRAMS)

plots: ## draw the figures of the newest results (RESULTS=dir for another)
	@py=$$(PYTHON='$(PYTHON)' plots/python.sh) && "$$py" plots/plot.py all $(RESULTS)

# ---- the PyTorch companions (optional) ----
# make torch-labs: every labs/labNN_topic/torch_labNN.py in order, with
# TORCH_ARGS (say TORCH_ARGS=--quick), by PYTHON (default python3), a Python
# with PyTorch. A companion that cannot run here (exit 3: no PyTorch, no GPU)
# says why in one line and is not a failure; any other exit but 0 is.
.PHONY: torch-labs
TORCH_LABS := $(sort $(wildcard labs/lab[0-9][0-9]_*/torch_lab[0-9][0-9].py))
TORCH_ARGS ?=

torch-labs: ## run every PyTorch companion (PYTHON=path, TORCH_ARGS=--quick)
	@status=0; for f in $(TORCH_LABS); do \
	  echo "== $(or $(PYTHON),python3) $$f $(TORCH_ARGS)"; \
	  $(or $(PYTHON),python3) $$f $(TORCH_ARGS); rc=$$?; \
	  case $$rc in 0|3) ;; *) echo "$$f: exit $$rc" >&2; status=1 ;; esac; \
	done; exit $$status

# ---- grading ----
# make grade grades exercises/ (the student's working copy); SUBMISSION=dir
# grades a folder of one student's exNN_*.cu files. make grade-all
# SUBMISSIONS=dir grades every sub-folder (one per student) into one CSV, on
# every visible GPU at once (GPUS=N for fewer); SHARD=i/N grades the i-th of
# N slices of the class, and make grade-merge SHARDS="out1 out2 ..." joins
# the slices' outputs (grader/slurm/ runs them as a Slurm job array).
# FORMAT=gradescope adds Gradescope's results.json. GRADE_OUT=dir: where the
# reports go (default build/grade/<student>, or build/grade/all); not OUT,
# which CI systems and GPU runners set in the environment, where make would
# take it. ONLY=ex04,ex06 grades some exercises, MEMCHECK=no skips
# compute-sanitizer, TIME_LIMIT=S replaces the rubrics' time limits.
# Student code is built and run in a sandbox (bubblewrap; MEMORY_LIMIT=GIB
# is its memory); where none can be made, grading stops, unless UNSAFE=1
# (every report then says so).
# Folder names reach grade.py through the environment, never through the
# shell's quoting, so that a student called o'brien is graded like any other.
# exercises/README.md is the instructor's guide; grader/rubrics/ the points.
.PHONY: grade grade-all grade-merge grade-flags grade-stress
SUBMISSION  ?= exercises
SUBMISSIONS ?=
SHARDS      ?=
FORMAT      ?= text
GRADE_OUT   ?=
export SUBMISSION SUBMISSIONS SHARDS GRADE_OUT
GRADE_ARGS   = --format '$(FORMAT)' $(if $(GRADE_OUT),--out "$$GRADE_OUT") \
               $(if $(ONLY),--only '$(ONLY)') $(if $(filter no,$(MEMCHECK)),--no-memcheck) \
               $(if $(TIME_LIMIT),--time-limit '$(TIME_LIMIT)') $(if $(filter 1,$(UNSAFE)),--unsafe) \
               $(if $(MEMORY_LIMIT),--memory-limit '$(MEMORY_LIMIT)')
GRADE_TOOLS  = $(LIB) $(BUILD)/tests/gpu_probe

grade: ## grade exercises/, or SUBMISSION=dir (FORMAT=gradescope for Gradescope)
	@python3 grader/grade.py --submission "$$SUBMISSION" $(GRADE_ARGS)

grade-all: ## grade every student's folder in SUBMISSIONS=dir into one CSV (SHARD=i/N, GPUS=N)
	@test -n "$$SUBMISSIONS" || { echo "make grade-all: give SUBMISSIONS=dir, a folder with one sub-folder per student" >&2; exit 2; }
	@python3 grader/grade.py --submissions "$$SUBMISSIONS" $(GRADE_ARGS) \
	  $(if $(SHARD),--shard '$(SHARD)') $(if $(GPUS),--gpus '$(GPUS)')

# make grade-stress RUNS=20: every reference solution RUNS times with --grade,
# interleaved, then per rubric criterion how often it was met, the value's
# spread and the bound (grader/rubric_stress.py says how): the rubric's
# false-negative rates on this machine, before a course grades on it.
# ONLY=ex03,ex05 for some exercises, STRICT=1 fails on any miss.
grade-stress: $(SOLUTIONS) ## run the reference solutions RUNS=N times, count each rubric criterion met
	@python3 grader/rubric_stress.py run --runs '$(RUNS)' --bindir '$(BINDIR)' \
	  $(if $(ONLY),--only '$(ONLY)') $(if $(filter 1,$(STRICT)),--strict)

grade-merge: ## join the outputs of grade-all's shards, SHARDS="dir1 dir2 ...", into GRADE_OUT=dir
	@test -n "$$SHARDS" -a -n "$$GRADE_OUT" || { echo "make grade-merge: give SHARDS=\"dir1 dir2 ...\" (grade-all's outputs, one per SHARD=i/N) and GRADE_OUT=dir" >&2; exit 2; }
	@python3 grader/grade.py --merge $$SHARDS $(GRADE_ARGS)

# What grade.py builds a submission with, once built in BUILD (grade.py gives
# its own, fresh for each grading run, outside the sandbox): the compiler, the
# flags (include folders made absolute), the library, the given objects
# (GIVEN_exNN), what checks.py compares the student's object with, and the
# probe that says whether a GPU is usable.
abs_includes = $(foreach f,$(1),$(if $(filter -I%,$(f)),-I$(abspath $(patsubst -I%,%,$(f))),$(f)))
grade-flags: $(GRADE_TOOLS) $(GRADING_OBJ) $(GIVEN_OBJ)
	@printf '%s\n' 'NVCC=$(NVCC)' 'LIB=$(LIB)' 'LDLIBS=$(LDLIBS)' \
	  'EX_NVCCFLAGS=$(call abs_includes,$(EX_NVCCFLAGS))' 'GRADING_OBJ=$(GRADING_OBJ)' \
	  'DEFINERS=$(DEFINERS)' 'PROBE=$(BUILD)/tests/gpu_probe' \
	  $(foreach n,$(GIVEN_NUMBERS),'GIVEN_ex$(n)=$(BUILD)/ex$(n)/ex$(n).o' 'LIBS_ex$(n)=$(PROG_LIBS_ex$(n))')

# ---- lint and sanitizers ----
# make lint: cppcheck on every C and CUDA source, clang-tidy on the host C
# (tests/tools/lint.sh says why that scope); make test runs it (cpu_lint.bats).
# make sanitize: every lab and solution under compute-sanitizer's memcheck (with leak
# checking), initcheck and synccheck, one line per program and tool, logs in
# build/sanitize/ (tests/tools/sanitize.sh). SANITIZE_PROGRAMS="lab00 ex04"
# checks some, SANITIZE_TOOLS=memcheck one tool, SANITIZE_JOBS=N runs N at
# once, SANITIZE_TIMEOUT=S limits each run.
.PHONY: lint sanitize
LINT_C            := $(sort $(wildcard common/*.c kernels/*.c exercises/given/*.c tests/tools/*.c))
LINT_CU           := $(LAB_SRCS) $(LAB_EXTRA_SRCS) $(EX_SRCS) $(SOL_SRCS) \
                     $(sort $(wildcard kernels/*.cu exercises/given/*.cu tests/tools/*.cu))
# Every lab (lab00 and lab01_ptds too) and every reference solution; not the
# exercises, which are unfinished on purpose (ex06 as given races and exits 1).
SANITIZE_PROGRAMS ?= $(LABS) $(PTDS) $(SOLUTIONS)

lint: ## static checks: cppcheck on all the code, clang-tidy on the host C
	@LINT_C='$(LINT_C)' LINT_CU='$(LINT_CU)' \
	  LINT_CFLAGS='-std=c99 -Icommon -Ikernels -Iexercises/given -I$(CUDA_HOME)/include $(CUPTI_CFLAGS)' \
	  tests/tools/lint.sh

sanitize: $(SANITIZE_PROGRAMS) $(BUILD)/tests/gpu_probe ## every lab and solution under compute-sanitizer (memcheck, initcheck, synccheck)
	@CUDA_HOME='$(CUDA_HOME)' BINDIR='$(BINDIR)' GPU_PROBE='$(BUILD)/tests/gpu_probe' \
	  tests/tools/sanitize.sh $(SANITIZE_PROGRAMS)

# Test tools with device code: the GPU loader, the sanitizer's canary, the machine
# probe and lab_attempt on a made-up comparison.
TEST_TOOLS += $(BUILD)/tests/gpu_load $(BUILD)/tests/sanitize_canary $(BUILD)/tests/machine_probe \
              $(BUILD)/tests/attempt_test
$(BUILD)/tests/%: tests/tools/%.cu $(LIB) $(HEADERS) $(FLAGS_STAMP) | check-nvcc
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# ---- targets for people -----------------------------------------------------------
.PHONY: all labs exercises solutions test test-tools list clean help check-nvcc

all: $(PROGRAMS) ## build every lab, exercise and solution (default)
labs: $(LABS) ## build the labs only
exercises: $(EXERCISES) ## build the exercises only
solutions: $(SOLUTIONS) ## build the reference solutions only
test-tools: $(TEST_TOOLS)

test: ## run every test suite (GPU tests skip without a GPU)
	@tests/run.sh

list: ## print the names of every program, one a line
	@printf '%s\n' $(PROGRAMS)

clean: ## remove build/ and the programs
	rm -rf $(BUILD) $(addprefix $(BINDIR)/,$(PROGRAMS))

check-nvcc:
	@test -n "$(NVCC_PATH)" || { echo "nvcc not found: install the CUDA toolkit 13 and put its bin/ on PATH, or run make NVCC=/path/to/nvcc" >&2; exit 1; }

help: ## list the targets
	@echo "streamlab: CUDA streams, made visible and measured."
	@echo
	@echo "  make labNN          build ./labNN, e.g. make lab00 && ./lab00"
	@echo "  make exNN, solNN    build exercise NN, or its reference solution"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/  make \1\t\2/' | expand -t 22
	@echo
	@echo "  programs here: $(PROGRAMS)"
	@echo "  lab13's NCCL: $(NCCL_SAID)"
	@echo "  timelines (--trace, --timeline): $(if $(CUPTI_CFLAGS),CUPTI found in $(CUPTI_LIBDIR),no CUPTI found: unavailable)"
	@echo "  variables: ARCH=sm_XY (GPU code; now: $(or $(ARCH),$(if $(DETECTED),sm_$(DETECTED) (detected),portable default))), NVCC=path"
	@echo "             RUNS=N (results), RESULTS=dir and PYTHON=path (plots), SUBMISSION(S)=dir and FORMAT=gradescope (grade)"
	@echo "             SHARD=i/N, GPUS=N (grade-all), SHARDS=\"dir1 dir2\" (grade-merge), GRADE_OUT=dir"
	@echo "             RUNS=N, MODES=\"quick default\", LOAD=none|gpu|host|both, STRESS_PROGRAMS=, STRICT=1 (stress)"
	@echo "             RUNS=N, ONLY=ex03,ex05, STRICT=1 (grade-stress)"
