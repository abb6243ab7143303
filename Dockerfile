# Rebuilds the paper from the committed runs: analysis -> tables, figures -> paper.{tex,html,pdf}
# -> claims report. pdflatex is installed, so the PDF is made by LaTeX (Typst is the fallback
# when no LaTeX engine is present). Python packages are pinned by constraints.txt; cmake and g++
# let `doit toolchain` build the pinned llama-server inside the image for new campaigns.
FROM python:3.11-slim

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      texlive-latex-base texlive-latex-recommended texlive-latex-extra \
      texlive-fonts-recommended lmodern poppler-utils git \
      cmake g++ make \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /artifact
COPY . .
RUN pip install -c constraints.txt -e ".[dev]"

CMD ["doit"]
