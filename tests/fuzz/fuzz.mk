# Builds the libFuzzer targets with clang, ASan and UBSan (run.sh calls this).
# Objects are kept in $(OUT)/obj, so later runs only rebuild what changed.
OUT ?= build-fuzz
CXX := clang++
# The project version, as CMake passes it to compiled_function.cc.
VERSION := $(word 3,$(shell grep -m1 "^project.msrt VERSION" CMakeLists.txt))
# MindSpore's checkpoint schema, compiled by protoc as the CMake build does.
PROTO_OUT := $(OUT)/gen
PROTO_CC := $(PROTO_OUT)/io/mindspore_checkpoint.pb.cc
FLAGS := -std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
         -Iinclude -Isrc -isystem $(PROTO_OUT) -MMD -MP -DMSRT_VERSION_STRING='"$(VERSION)"'
COMMON := $(wildcard src/core/*.cc src/context/*.cc src/memory/*.cc src/kernels/no_cuda/*.cc)
SOURCES_context_parsers := $(COMMON)
IO := $(wildcard src/io/*.cc) $(PROTO_CC)
SOURCES_checkpoint := $(COMMON) $(IO)
SOURCES_mindspore_checkpoint := $(COMMON) $(IO)
SOURCES_mnist_idx := $(COMMON) $(IO)
SOURCES_image := $(COMMON) $(IO)
# The collective ops' kernels reach communicators through the group registry, and
# per-rank places ask the cluster for the rank; no communicator is made here.
PARALLEL := src/parallel/communicator.cc src/parallel/groups.cc src/parallel/cluster.cc src/parallel/store.cc \
            src/parallel/no_gloo/gloo_communicator.cc src/parallel/no_nccl/nccl_communicator.cc
SOURCES_store_protocol := $(COMMON) src/parallel/store.cc
# A rank of a job writes its print file in a place of its own (runtime/rank.cc asks the cluster).
SOURCES_print_file := $(COMMON) $(PARALLEL) src/runtime/print_sink.cc src/runtime/rank.cc src/kernels/print_sink.cc
SOURCES_graph_record = $(SOURCES_graph_file)
SOURCES_graph_file := $(COMMON) $(IO) $(PARALLEL) $(wildcard src/ir/*.cc src/ops/*.cc src/autodiff/*.cc \
                      src/kernels/*.cc src/kernels/cpu/*.cc src/runtime/*.cc src/compiler/*.cc)
TARGETS ?= context_parsers checkpoint mindspore_checkpoint mnist_idx print_file graph_file graph_record image store_protocol

obj = $(patsubst %.cc,$(OUT)/obj/%.o,$(1))

all: $(foreach t,$(TARGETS),$(OUT)/$(t)_fuzz)

define target_rule
$(OUT)/$(1)_fuzz: $(call obj,$(SOURCES_$(1))) $(OUT)/obj/tests/fuzz/$(1)_fuzz.o
	$(CXX) $(FLAGS) -fsanitize=fuzzer $$^ -o $$@ $(LIBS_$(1)) -lpthread
endef
# src/io links protobuf (MindSpore checkpoints), libturbojpeg and libpng (images).
IO_LIBS := -lprotobuf -lturbojpeg -lpng16
LIBS_checkpoint := $(IO_LIBS)
LIBS_mindspore_checkpoint := $(IO_LIBS)
LIBS_mnist_idx := $(IO_LIBS)
LIBS_image := $(IO_LIBS)
LIBS_graph_file := -ldnnl -fopenmp $(IO_LIBS)
LIBS_graph_record := -ldnnl -fopenmp $(IO_LIBS)
$(foreach t,$(TARGETS),$(eval $(call target_rule,$(t))))

$(PROTO_CC): src/io/mindspore_checkpoint.proto
	@mkdir -p $(PROTO_OUT)
	protoc --cpp_out=$(PROTO_OUT) -Isrc $<
$(OUT)/obj/src/io/mindspore_checkpoint.o $(OUT)/obj/tests/fuzz/mindspore_checkpoint_fuzz.o: $(PROTO_CC)

$(OUT)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)
