# Rebuilds the paper from the committed runs: analysis -> tables, figures -> paper.{tex,html,pdf}
# -> claims report. pdflatex is installed, so the PDF is made by LaTeX (Typst is the fallback
# when no LaTeX engine is present).
FROM python:3.11-slim

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      texlive-latex-base texlive-latex-recommended texlive-latex-extra \
      texlive-fonts-recommended lmodern poppler-utils git \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /artifact
COPY . .
RUN pip install -e ".[dev]"

CMD ["doit"]
