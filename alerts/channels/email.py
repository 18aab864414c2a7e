"""Email over SMTP (STARTTLS, SSL or plain), text + HTML with a trend chart inline.

The message is multipart/alternative: text/plain, then multipart/related holding text/html and
one image/png per charted alert, referenced from the HTML as ``cid:``. Errors name the channel
and the SMTP reply code, never the server's reply text (it may echo the user name).
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Literal

from alerts.charts import trend_png
from alerts.models import Alert
from alerts.render import Renderer, message_id
from sessions.errors import DeliveryError

MAX_CHARTS = 5  # one chart per alert, for the first few alerts of a digest


class EmailChannel:
    def __init__(
        self,
        name: str,
        *,
        renderer: Renderer,
        host: str,
        port: int,
        sender: str,
        recipients: Sequence[str],
        security: Literal["starttls", "ssl", "none"] = "starttls",
        username: str | None = None,
        password: str | None = None,
        timeout_s: float = 30,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.name = name
        self.renderer = renderer
        self.host, self.port, self.security = host, port, security
        self.sender, self.recipients = sender, list(recipients)
        self.timeout_s = timeout_s
        self._credentials = (username, password) if username and password else None
        self._ssl_context = ssl_context

    def __repr__(self) -> str:
        return f"EmailChannel(name={self.name!r}, host={self.host!r}, port={self.port})"

    def build_message(self, alerts: Sequence[Alert]) -> EmailMessage:
        domain = self.sender.rpartition("@")[2] or "halluwatch"
        charts: dict[str, tuple[str, bytes]] = {}
        for alert in alerts[:MAX_CHARTS]:
            if alert.value is None:
                continue
            points = [("baseline", alert.baseline)] if alert.baseline is not None else []
            points.append((alert.day.isoformat(), alert.value))
            png = trend_png(points, alert.baseline)
            charts[alert.id] = (make_msgid("chart", domain=domain)[1:-1], png)
        subject, text, html = self.renderer.email(
            alerts, chart_cids={aid: cid for aid, (cid, _) in charts.items()}
        )
        msg = EmailMessage()
        msg["Subject"] = subject
        msg["From"] = self.sender
        msg["To"] = ", ".join(self.recipients)
        msg["Date"] = formatdate(localtime=False, usegmt=True)
        msg["Message-ID"] = make_msgid("halluwatch", domain=domain)
        msg["X-Halluwatch-Id"] = message_id(alerts)
        msg.set_content(text)
        msg.add_alternative(html, subtype="html")
        html_part = next(p for p in msg.iter_parts() if p.get_content_type() == "text/html")
        for cid, png in charts.values():
            html_part.add_related(
                png,
                maintype="image",
                subtype="png",
                cid=f"<{cid}>",
                disposition="inline",
                filename="trend.png",
            )
        return msg

    def send(self, alerts: Sequence[Alert]) -> None:
        msg = self.build_message(alerts)
        stage = "connect"
        try:
            with self._connect() as smtp:
                if self.security == "starttls":
                    stage = "STARTTLS"
                    smtp.starttls(context=self._context())
                if self._credentials is not None:
                    stage = "login"
                    smtp.login(*self._credentials)
                stage = "send"
                smtp.send_message(msg, from_addr=self.sender, to_addrs=self.recipients)
        except smtplib.SMTPAuthenticationError as exc:
            raise self._error(f"SMTP {exc.smtp_code}: credentials rejected", False) from None
        except smtplib.SMTPNotSupportedError:
            raise self._error(f"the server does not support {stage}", False) from None
        except smtplib.SMTPRecipientsRefused as exc:
            refused = len(exc.recipients)
            raise self._error(f"{refused} recipient(s) refused", False) from None
        except smtplib.SMTPResponseException as exc:
            code = exc.smtp_code
            raise self._error(f"SMTP {code} at {stage}", 400 <= code < 500) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise self._error(f"{type(exc).__name__} at {stage}", True) from None

    def _connect(self) -> smtplib.SMTP:
        if self.security == "ssl":
            return smtplib.SMTP_SSL(
                self.host, self.port, timeout=self.timeout_s, context=self._context()
            )
        return smtplib.SMTP(self.host, self.port, timeout=self.timeout_s)

    def _context(self) -> ssl.SSLContext:
        return self._ssl_context or ssl.create_default_context()

    def _error(self, detail: str, retryable: bool) -> DeliveryError:
        return DeliveryError(f"email channel {self.name!r}: {detail}", retryable=retryable)
